package rayd

import (
	"context"
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// Buffer is typed device memory (see package launch).
type Buffer[T launch.Elem] = launch.Buffer[T]

// DeviceRays is a device-resident ray batch: Origins and Directions hold 3N
// float32; TMax (N) and Active (N bytes, non-zero = active) may be nil.
type DeviceRays struct {
	Origins, Directions *Buffer[float32]
	TMax                *Buffer[float32]
	Active              *Buffer[uint8]
	N                   int
}

// DeviceHits is a device-resident intersection record for N rows. T is
// always present; the other fields exist when Flags selects them.
type DeviceHits struct {
	Flags                                      Flags
	N                                          int
	T, P, Normal, GeoN, UV, Bary               *Buffer[float32]
	ShapeID, PrimID, LocalPrimID, GlobalPrimID *Buffer[int32]
}

// Close frees the buffers of r. Idempotent.
func (r *DeviceRays) Close() error {
	return closeAll(r.Origins, r.Directions, r.TMax, r.Active)
}

// Close frees the buffers of h. Idempotent.
func (h *DeviceHits) Close() error {
	return closeAll(h.T, h.P, h.Normal, h.GeoN, h.UV, h.Bary, h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID)
}

type closer interface{ Close() error }

// closeAll closes every c (nil *Buffer values are no-ops) and returns the
// first error.
func closeAll(cs ...closer) error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Scene) cuda() (*cudaEngine, error) {
	e, ok := s.eng.(*cudaEngine)
	if !ok {
		return nil, fmt.Errorf("%w: device buffers need a single-device CUDA scene (this scene runs on %s)", ErrBackendUnavailable, s.describe())
	}
	return e, nil
}

// fastDevice is the device whose buffers the device fast paths take: the
// CUDA engine's device, or the master of a replicated scene on CUDA replicas.
func (s *Scene) fastDevice() (*launch.Device, error) {
	switch e := s.eng.(type) {
	case *cudaEngine:
		return e.dev, nil
	case *layerEngine:
		if e.dev != nil {
			return e.dev, nil
		}
	}
	return nil, fmt.Errorf("%w: device buffers need the CUDA backend (this scene runs on %s)", ErrBackendUnavailable, s.describe())
}

// describe names where the scene runs, for error messages.
func (s *Scene) describe() string {
	if s.layer != nil {
		return fmt.Sprintf("replicated devices %v", s.layer.Devices())
	}
	return string(s.backend)
}

// uploadStream is a stream of the fast device to upload on, and its release.
func (s *Scene) uploadStream(ctx context.Context) (*launch.Stream, func(), error) {
	if e, ok := s.eng.(*cudaEngine); ok {
		sl, err := e.acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		return sl.s, func() { e.release(sl) }, nil
	}
	le, ok := s.eng.(*layerEngine)
	if !ok {
		return nil, nil, fmt.Errorf("%w: no device to upload to", ErrBackendUnavailable)
	}
	m, err := le.acquireStream(ctx)
	if err != nil {
		return nil, nil, err
	}
	return m.st, func() { le.releaseStream(m) }, nil
}

// UploadRays copies a host batch to new device buffers on the scene's device.
func (s *Scene) UploadRays(ctx context.Context, r Rays) (*DeviceRays, error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	dev, err := s.fastDevice()
	if err != nil {
		return nil, err
	}
	if err := checkHostRays(r); err != nil {
		return nil, err
	}
	st, release, err := s.uploadStream(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	n := r.Len()
	dr := &DeviceRays{N: n}
	fail := func(err error) (*DeviceRays, error) { _ = dr.Close(); return nil, err }
	if dr.Origins, err = launch.Alloc[float32](dev, 3*n); err != nil {
		return fail(err)
	}
	if dr.Directions, err = launch.Alloc[float32](dev, 3*n); err != nil {
		return fail(err)
	}
	if err := dr.Origins.Upload(st, r.Origins); err != nil {
		return fail(err)
	}
	if err := dr.Directions.Upload(st, r.Directions); err != nil {
		return fail(err)
	}
	if len(r.TMax) > 0 {
		if dr.TMax, err = launch.Alloc[float32](dev, n); err != nil {
			return fail(err)
		}
		if err := dr.TMax.Upload(st, r.TMax); err != nil {
			return fail(err)
		}
	}
	if len(r.Active) > 0 {
		if dr.Active, err = launch.Alloc[uint8](dev, n); err != nil {
			return fail(err)
		}
		if err := dr.Active.Upload(st, boolsToBytes(r.Active)); err != nil {
			return fail(err)
		}
	}
	return dr, st.Synchronize()
}

// AllocHits allocates a device record for n rows with the fields flags selects.
func (s *Scene) AllocHits(n int, flags Flags) (*DeviceHits, error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	dev, err := s.fastDevice()
	if err != nil {
		return nil, err
	}
	if n < 0 || !flags.Valid() {
		return nil, fmt.Errorf("%w: AllocHits(%d, %v)", ErrInvalidArgument, n, flags)
	}
	return allocHits(dev, n, flags)
}

// allocHits allocates the fields flags selects for n rows on dev.
func allocHits(dev *launch.Device, n int, flags Flags) (*DeviceHits, error) {
	var err error
	h := &DeviceHits{Flags: flags, N: n}
	f := func(per int) *Buffer[float32] {
		if err != nil {
			return nil
		}
		var b *Buffer[float32]
		b, err = launch.Alloc[float32](dev, per*n)
		return b
	}
	i := func() *Buffer[int32] {
		if err != nil {
			return nil
		}
		var b *Buffer[int32]
		b, err = launch.Alloc[int32](dev, n)
		return b
	}
	h.T = f(1)
	if flags.Has(FlagGeometric) {
		h.P, h.GeoN, h.Bary = f(3), f(3), f(3)
		h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID = i(), i(), i(), i()
	}
	if flags.Has(FlagShadingN) {
		h.Normal = f(3)
	}
	if flags.Has(FlagUV) {
		h.UV = f(2)
	}
	if err != nil {
		_ = h.Close()
		return nil, err
	}
	return h, nil
}

// IntersectInto is the allocation-free fast path: the closest hit of every
// device ray, written into out (out.N == rays.N; out.Flags selects the
// fields). It returns once the results are in out.
func (s *Scene) IntersectInto(ctx context.Context, rays *DeviceRays, out *DeviceHits) error {
	check := func(dev *launch.Device) error {
		if out == nil || out.N != rays.N || out.T == nil {
			return fmt.Errorf("%w: hits record does not match %d rays", ErrLength, rays.N)
		}
		return sameDevice(dev, "hits record", out.T.Device())
	}
	hits := func() accel.Hits {
		return accel.Hits{T: out.T, P: out.P, N: out.Normal, GeoN: out.GeoN, UV: out.UV, Bary: out.Bary,
			ShapeID: out.ShapeID, PrimID: out.PrimID, LocalPrimID: out.LocalPrimID, GlobalPrimID: out.GlobalPrimID}
	}
	return s.fastPath(ctx, rays, check, func(t tracer, st *launch.Stream, r accel.Rays) error {
		return t.Intersect(st, r, out.Flags, hits())
	}, func(ctx context.Context, l *shard.Layer, st *launch.Stream, r accel.Rays, direct func(shard.Replica) error) error {
		return layerRows(ctx, l, &replica.DeviceIntersect{Rays: r, Flags: out.Flags, Out: hits(), Stream: st}, direct)
	})
}

// fastPath is the common body of the device fast paths: with the scene
// read-locked it validates the rays and (check) the outputs; a single-device
// scene takes a stream slot, runs the launch (run) and waits for it, a
// replicated scene runs the device task through the layer (multi), which
// returns once the results are in place. An empty batch launches nothing.
func (s *Scene) fastPath(ctx context.Context, rays *DeviceRays, check func(*launch.Device) error,
	run func(t tracer, st *launch.Stream, r accel.Rays) error, multi layerCall) error {
	if err := s.rlock(); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	dev, err := s.fastDevice()
	if err != nil {
		return err
	}
	if err := checkDeviceRays(dev, rays); err != nil {
		return err
	}
	if err := check(dev); err != nil {
		return err
	}
	if rays.N == 0 {
		return ctx.Err()
	}
	if le, ok := s.eng.(*layerEngine); ok {
		// The layer orders every chunk on a master stream instead of
		// waiting on the host per retired chunk; one wait at the end. A
		// call the plan keeps on the master is the single-device launch on
		// the master's replica.
		m, err := le.acquireStream(ctx)
		if err != nil {
			return err
		}
		defer le.releaseStream(m)
		r := accel.Rays{O: rays.Origins, D: rays.Directions, TMax: rays.TMax, Active: rays.Active, N: rays.N}
		direct := func(rep shard.Replica) error {
			cr, ok := shard.Unwrap(rep).(cudaReplica)
			if !ok {
				return fmt.Errorf("%w: the master replica is not a CUDA device", ErrBackendUnavailable)
			}
			rc := r
			rc.Counter = m.counter
			return onReplica(rep, func() error { return run(cr.BVH(), m.st, rc) })
		}
		if err := multi(ctx, s.layer, m.st, r, direct); err != nil {
			_ = m.st.Synchronize() // copies of the inputs may still be queued
			return err
		}
		return m.st.Synchronize()
	}
	e, err := s.cuda()
	if err != nil {
		return err
	}
	sl, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(sl)
	r := accel.Rays{O: rays.Origins, D: rays.Directions, TMax: rays.TMax, Active: rays.Active, N: rays.N, Counter: sl.counter}
	if err := run(e.bvh, sl.s, r); err != nil {
		return err
	}
	return sl.s.Synchronize()
}

// layerCall runs a device fast path through a replicated scene's layer on
// master stream st; direct runs it as the single-device call on the master
// replica it is given.
type layerCall func(ctx context.Context, l *shard.Layer, st *launch.Stream, r accel.Rays, direct func(shard.Replica) error) error

// onReplica runs fn as the single-device call on replica rep: it first
// waits for the replica's latest geometry (its entry edge, after a refit
// that may still be queued on the replica's own stream), and records the
// exit edge afterwards, as a layer call does. fn's work must be complete
// (or ordered before any later mutation) when the caller releases the scene.
func onReplica(rep shard.Replica, fn func() error) error {
	entry, err := rep.Enter(nil)
	if err != nil {
		return err
	}
	if entry != nil {
		if err := entry.Wait(); err != nil {
			return err
		}
	}
	return errors.Join(fn(), rep.Exit())
}

// layerRows runs t on the layer, or through direct when the plan keeps the
// whole batch on the master (shard.RowsOnMaster).
func layerRows[R any](ctx context.Context, l *shard.Layer, t shard.RowTask[R], direct func(shard.Replica) error) error {
	rep, ok, err := shard.RowsOnMaster(l, t)
	if err != nil {
		return err
	}
	if ok {
		return direct(rep)
	}
	_, err = shard.RunRows(ctx, l, t)
	return err
}

func sameDevice(dev *launch.Device, what string, d *launch.Device) error {
	if d != dev {
		return fmt.Errorf("%w: %s on %v, scene on %v", ErrWrongDevice, what, d, dev)
	}
	return nil
}

// Download copies the record to the host.
func (h *DeviceHits) Download(ctx context.Context) (*Hits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := h.T.Device().NewStream()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return downloadHits(s, accel.Hits{T: h.T, P: h.P, N: h.Normal, GeoN: h.GeoN, UV: h.UV, Bary: h.Bary,
		ShapeID: h.ShapeID, PrimID: h.PrimID, LocalPrimID: h.LocalPrimID, GlobalPrimID: h.GlobalPrimID}, h.N, h.Flags)
}

func checkHostRays(r Rays) error {
	_, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active)
	return err
}

func checkDeviceRays(d *launch.Device, r *DeviceRays) error {
	if r == nil || r.Origins == nil || r.Directions == nil {
		return fmt.Errorf("%w: device rays need Origins and Directions", ErrInvalidArgument)
	}
	need := func(name string, have, want int) error {
		if have < want {
			return fmt.Errorf("%w: %s has %d elements, want %d", ErrLength, name, have, want)
		}
		return nil
	}
	if err := need("Origins", r.Origins.Len(), 3*r.N); err != nil {
		return err
	}
	if err := need("Directions", r.Directions.Len(), 3*r.N); err != nil {
		return err
	}
	for _, b := range []*Buffer[float32]{r.Origins, r.Directions, r.TMax} {
		if b != nil && b.Device() != d {
			return fmt.Errorf("%w: ray buffer on %v, scene on %v", ErrWrongDevice, b.Device(), d)
		}
	}
	if r.TMax != nil {
		if err := need("TMax", r.TMax.Len(), r.N); err != nil {
			return err
		}
	}
	if r.Active != nil {
		if r.Active.Device() != d {
			return fmt.Errorf("%w: active buffer on %v, scene on %v", ErrWrongDevice, r.Active.Device(), d)
		}
		if err := need("Active", r.Active.Len(), r.N); err != nil {
			return err
		}
	}
	return nil
}

// Stream is a non-blocking CUDA stream (see package launch).
type Stream = launch.Stream

// AllocVisible allocates the n-byte output of VisibleInto on the scene's device.
func (s *Scene) AllocVisible(n int) (*Buffer[uint8], error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	dev, err := s.fastDevice()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, &geom.ArgumentError{Field: "AllocVisible", Reason: fmt.Sprintf("n %d", n)}
	}
	return launch.Alloc[uint8](dev, n)
}
