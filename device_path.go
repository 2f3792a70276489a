package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/internal/engine/cuda"
	"github.com/rayd-go/rayd/launch"
)

// Buffer is typed device memory (see package launch).
type Buffer[T launch.Elem] = launch.Buffer[T]

// Stream is a non-blocking CUDA stream (see package launch).
type Stream = launch.Stream

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

// DeviceReflections is a device-resident trace_reflections record for N rows
// and Bounces slots per row (slot i·Bounces+b). ImageSources may be nil.
type DeviceReflections struct {
	N, Bounces   int
	Valid        *Buffer[uint8]
	T            *Buffer[float32]
	PrimIDs      *Buffer[int32]
	ImageSources *Buffer[float32]
}

// Close frees the buffers of r. Idempotent.
func (r *DeviceRays) Close() error { return closeAll(r.Origins, r.Directions, r.TMax, r.Active) }

// Close frees the buffers of h. Idempotent.
func (h *DeviceHits) Close() error {
	return closeAll(h.T, h.P, h.Normal, h.GeoN, h.UV, h.Bary, h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID)
}

// Close frees the buffers. Idempotent.
func (r *DeviceReflections) Close() error { return closeAll(r.Valid, r.T, r.PrimIDs, r.ImageSources) }

func (r *DeviceRays) engine() engine.DeviceRays {
	return engine.DeviceRays{Origins: r.Origins, Directions: r.Directions, TMax: r.TMax, Active: r.Active, N: r.N}
}

func (h *DeviceHits) engine() engine.DeviceHits {
	return engine.DeviceHits{T: h.T, P: h.P, Normal: h.Normal, GeoN: h.GeoN, UV: h.UV, Bary: h.Bary,
		ShapeID: h.ShapeID, PrimID: h.PrimID, LocalPrimID: h.LocalPrimID, GlobalPrimID: h.GlobalPrimID}
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

// UploadRays copies a host batch to new device buffers on the scene's device
// (the master's on a replicated scene). Device rays carry no per-ray
// limits: a batch with TMin or Mask is refused (ErrInvalidArgument); the
// device fast path honours the meshes' masks (SetMeshMask) only.
func (s *Scene) UploadRays(ctx context.Context, r Rays) (*DeviceRays, error) {
	if _, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active); err != nil {
		return nil, err
	}
	if err := checkUntracedRays("UploadRays (device rays)", r); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	dev, err := s.eng.FastDevice()
	if err != nil {
		return nil, err
	}
	n := r.Len()
	dr := &DeviceRays{N: n}
	a := allocator{dev: dev}
	dr.Origins, dr.Directions = allocF32(&a, 3*n), allocF32(&a, 3*n)
	if len(r.TMax) > 0 {
		dr.TMax = allocF32(&a, n)
	}
	if len(r.Active) > 0 {
		dr.Active = allocU8(&a, n)
	}
	err = a.err
	if err == nil {
		err = s.eng.WithStream(ctx, func(st *launch.Stream) error {
			return firstErr(dr.Origins.Upload(st, r.Origins), dr.Directions.Upload(st, r.Directions),
				uploadOpt(st, dr.TMax, r.TMax), uploadOpt(st, dr.Active, cuda.BoolsToBytes(r.Active)))
		})
	}
	if err != nil {
		_ = dr.Close()
		return nil, err
	}
	return dr, nil
}

func uploadOpt[T launch.Elem](st *launch.Stream, b *Buffer[T], v []T) error {
	if b == nil {
		return nil
	}
	return b.Upload(st, v)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// allocator allocates buffers on dev and keeps the first error (later
// allocations return nil).
type allocator struct {
	dev *launch.Device
	err error
}

func alloc[T launch.Elem](a *allocator, n int) *Buffer[T] {
	if a.err != nil {
		return nil
	}
	b, err := launch.Alloc[T](a.dev, n)
	a.err = err
	return b
}

func allocF32(a *allocator, n int) *Buffer[float32] { return alloc[float32](a, n) }
func allocI32(a *allocator, n int) *Buffer[int32]   { return alloc[int32](a, n) }
func allocU8(a *allocator, n int) *Buffer[uint8]    { return alloc[uint8](a, n) }

// AllocHits allocates a device record for n rows with the fields flags selects.
func (s *Scene) AllocHits(n int, flags Flags) (*DeviceHits, error) {
	if n < 0 || !flags.Valid() {
		return nil, fmt.Errorf("%w: AllocHits(%d, %v)", ErrInvalidArgument, n, flags)
	}
	dev, err := s.fastDevice()
	if err != nil {
		return nil, err
	}
	if _, err := geom.CheckAlloc("intersect record", deviceFree(dev), n, flags.RowBytes()); err != nil {
		return nil, err
	}
	a := allocator{dev: dev}
	h := &DeviceHits{Flags: flags, N: n, T: allocF32(&a, n)}
	if flags.Has(FlagGeometric) {
		h.P, h.GeoN, h.Bary = allocF32(&a, 3*n), allocF32(&a, 3*n), allocF32(&a, 3*n)
		h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID = allocI32(&a, n), allocI32(&a, n), allocI32(&a, n), allocI32(&a, n)
	}
	if flags.Has(FlagShadingN) {
		h.Normal = allocF32(&a, 3*n)
	}
	if flags.Has(FlagUV) {
		h.UV = allocF32(&a, 2*n)
	}
	if a.err != nil {
		_ = h.Close()
		return nil, a.err
	}
	return h, nil
}

// AllocReflections allocates a device record for n rows and maxBounces
// slots; images selects the image-source field (12 more bytes per slot).
func (s *Scene) AllocReflections(n, maxBounces int, images bool) (*DeviceReflections, error) {
	dev, err := s.fastDevice()
	if err != nil {
		return nil, err
	}
	if err := geom.CheckReflections(n, maxBounces, images, deviceFree(dev)); err != nil {
		return nil, err
	}
	a := allocator{dev: dev}
	slots := n * maxBounces
	r := &DeviceReflections{N: n, Bounces: maxBounces, Valid: allocU8(&a, slots), T: allocF32(&a, slots), PrimIDs: allocI32(&a, slots)}
	if images {
		r.ImageSources = allocF32(&a, 3*slots)
	}
	if a.err != nil {
		_ = r.Close()
		return nil, a.err
	}
	return r, nil
}

// AllocVisible allocates the n-byte output of VisibleInto on the scene's device.
func (s *Scene) AllocVisible(n int) (*Buffer[uint8], error) {
	if n < 0 {
		return nil, &geom.ArgumentError{Field: "AllocVisible", Reason: fmt.Sprintf("n %d", n)}
	}
	dev, err := s.fastDevice()
	if err != nil {
		return nil, err
	}
	return launch.Alloc[uint8](dev, n)
}

// deviceFree is the free memory of dev (the limit of a device allocation
// sized by caller input); when it cannot be read, the allocation itself
// will say.
func deviceFree(dev *launch.Device) int64 {
	free, _, err := dev.MemInfo()
	if err != nil || free > 1<<62 {
		return 1 << 62
	}
	return int64(free)
}

// fastDevice is the device of the fast paths' buffers, read under the lock.
func (s *Scene) fastDevice() (*launch.Device, error) {
	if err := s.rlock(context.Background()); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.FastDevice()
}

// fastPath is the common entry of the device fast paths: with the scene
// read-locked it validates the rays and (check) the outputs, then runs the
// engine's launch (run), which returns once the results are in place. An
// empty batch launches nothing.
func (s *Scene) fastPath(ctx context.Context, rays *DeviceRays, check func(*launch.Device) error, run func() error) error {
	if err := s.rlock(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	dev, err := s.eng.FastDevice()
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
	return run()
}

// IntersectInto is the allocation-free fast path: the closest hit of every
// device ray, written into out (out.N == rays.N; out.Flags selects the
// fields). It returns once the results are in out.
func (s *Scene) IntersectInto(ctx context.Context, rays *DeviceRays, out *DeviceHits) error {
	return s.fastPath(ctx, rays, func(dev *launch.Device) error {
		if out == nil || out.N != rays.N || out.T == nil {
			return fmt.Errorf("%w: hits record does not match %d rays", ErrLength, rays.N)
		}
		return sameDevice(dev, "hits record", out.T.Device())
	}, func() error { return s.eng.IntersectInto(ctx, rays.engine(), out.Flags, out.engine()) })
}

// TraceReflectionsInto is the device fast path of TraceReflections: out
// (from AllocReflections, out.N == rays.N) receives up to out.Bounces
// bounces per ray. It returns once the results are in out.
func (s *Scene) TraceReflectionsInto(ctx context.Context, rays *DeviceRays, out *DeviceReflections) error {
	return s.fastPath(ctx, rays, func(dev *launch.Device) error {
		if out == nil || out.N != rays.N || out.Bounces < 1 || out.T == nil {
			return fmt.Errorf("%w: reflections record does not match %d rays", ErrLength, rays.N)
		}
		return sameDevice(dev, "reflections record", out.T.Device())
	}, func() error {
		return s.eng.TraceReflectionsInto(ctx, rays.engine(), out.Bounces,
			engine.DeviceReflections{Valid: out.Valid, T: out.T, PrimIDs: out.PrimIDs, Images: out.ImageSources})
	})
}

// VisibleInto is the device fast path of Visible: segments start→end (a
// DeviceRays whose Origins are the starts and Directions the ends, Active
// optional) and out (N bytes, 1 = visible).
func (s *Scene) VisibleInto(ctx context.Context, segments *DeviceRays, out *Buffer[uint8]) error {
	return s.fastPath(ctx, segments, func(dev *launch.Device) error {
		if out == nil || out.Len() < segments.N {
			return fmt.Errorf("%w: visibility output shorter than %d segments", ErrLength, segments.N)
		}
		return sameDevice(dev, "visibility output", out.Device())
	}, func() error { return s.eng.VisibleInto(ctx, segments.engine(), out) })
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
	return cuda.DownloadHits(s, cuda.HitsOf(h.engine()), h.N, h.Flags)
}

func checkDeviceRays(d *launch.Device, r *DeviceRays) error {
	if r == nil || r.Origins == nil || r.Directions == nil {
		return fmt.Errorf("%w: device rays need Origins and Directions", ErrInvalidArgument)
	}
	if r.N < 0 {
		return fmt.Errorf("%w: device rays N %d", ErrInvalidArgument, r.N)
	}
	need := func(name string, have, want int) error {
		if have < want {
			return fmt.Errorf("%w: %s has %d elements, want %d", ErrLength, name, have, want)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		b    *Buffer[float32]
		per  int
	}{{"Origins", r.Origins, 3}, {"Directions", r.Directions, 3}, {"TMax", r.TMax, 1}} {
		if c.b == nil {
			continue
		}
		if c.b.Device() != d {
			return fmt.Errorf("%w: ray buffer on %v, scene on %v", ErrWrongDevice, c.b.Device(), d)
		}
		if err := need(c.name, c.b.Len(), c.per*r.N); err != nil {
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
