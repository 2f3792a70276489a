package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// streamSlots is how many queries one CUDA scene runs at once; each slot owns
// a non-blocking stream and grow-only scratch buffers.
const streamSlots = 4

// tracer is one device's acceleration structure with its query launchers:
// rayd-go's BVH (accel.BVH) or OptiX (accel.OptiX). Both write the same
// device records.
type tracer interface {
	Intersect(s *launch.Stream, r accel.Rays, flags geom.Flags, out accel.Hits) error
	TraceReflections(s *launch.Stream, r accel.Rays, maxBounces int, out accel.Reflections) error
	Visible(s *launch.Stream, seg accel.Segments, out *launch.Buffer[uint8]) error
	Refit(s *launch.Stream, t *geom.Tables) error
	Close() error
}

// buildTracer builds the acceleration structure of t on s.
type buildTracer func(s *launch.Stream, t *geom.Tables) (tracer, error)

func buildBVH(s *launch.Stream, t *geom.Tables) (tracer, error) { return accel.Build(s, t) }

func buildOptiX(s *launch.Stream, t *geom.Tables) (tracer, error) { return accel.BuildOptiX(s, t) }

// cudaEngine runs queries on one device through a tracer.
type cudaEngine struct {
	dev      *launch.Device
	build    *launch.Stream
	bvh      tracer
	slots    chan *slot
	edges    deviceEdges // built on the first edge query
	blockers blockerBVH  // OptiX engines: the visibility variants' BVH
}

// slot is one query lane: a stream, the persistent-launch counter and
// scratch buffers reused across calls (grown, never shrunk).
type slot struct {
	s       *launch.Stream
	counter *launch.Buffer[uint32]
	f32     map[string]*launch.Buffer[float32]
	i32     map[string]*launch.Buffer[int32]
	u8      map[string]*launch.Buffer[uint8]
}

func newCUDAEngine(ctx context.Context, t *geom.Tables, ordinal int, build buildTracer) (_ engine, err error) {
	dev, err := launch.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: CUDA device %d: %w", ErrBackendUnavailable, ordinal, err)
	}
	e := &cudaEngine{dev: dev, slots: make(chan *slot, streamSlots)}
	defer func() {
		if err != nil {
			_ = e.close()
		}
	}()
	if e.build, err = dev.NewStream(); err != nil {
		return nil, err
	}
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	if e.bvh, err = build(e.build, t); err != nil {
		return nil, fmt.Errorf("rayd: building the acceleration structure on %v: %w", dev, err)
	}
	for i := 0; i < streamSlots; i++ {
		sl := &slot{f32: map[string]*launch.Buffer[float32]{}, i32: map[string]*launch.Buffer[int32]{}, u8: map[string]*launch.Buffer[uint8]{}}
		if sl.s, err = dev.NewStream(); err != nil {
			return nil, err
		}
		if sl.counter, err = launch.Alloc[uint32](dev, 1); err != nil {
			_ = sl.s.Close()
			return nil, err
		}
		e.slots <- sl
	}
	return e, nil
}

// acquire takes a free slot, honouring ctx while waiting.
func (e *cudaEngine) acquire(ctx context.Context) (*slot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case sl := <-e.slots:
		return sl, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (e *cudaEngine) release(sl *slot) { e.slots <- sl }

// scratch returns an n-element view of the named grow-only buffer of m.
func scratch[T launch.Elem](d *launch.Device, m map[string]*launch.Buffer[T], name string, n int) (*launch.Buffer[T], error) {
	b := m[name]
	if b == nil || b.Len() < n {
		if b != nil {
			if err := b.Close(); err != nil {
				return nil, err
			}
			delete(m, name)
		}
		nb, err := launch.Alloc[T](d, max(n, 1))
		if err != nil {
			return nil, err
		}
		b, m[name] = nb, nb
	}
	return b.View(0, n)
}

// uploadRays stages a host batch in the slot's scratch buffers.
func (e *cudaEngine) uploadRays(sl *slot, o, d, tmax []float32, active []bool) (accel.Rays, error) {
	n := len(o) / 3
	r := accel.Rays{N: n, Counter: sl.counter}
	var err error
	if r.O, err = scratch(e.dev, sl.f32, "o", 3*n); err != nil {
		return r, err
	}
	if r.D, err = scratch(e.dev, sl.f32, "d", 3*n); err != nil {
		return r, err
	}
	if err = r.O.Upload(sl.s, o); err != nil {
		return r, err
	}
	if err = r.D.Upload(sl.s, d); err != nil {
		return r, err
	}
	if len(tmax) > 0 {
		if r.TMax, err = scratch(e.dev, sl.f32, "tmax", n); err != nil {
			return r, err
		}
		if err = r.TMax.Upload(sl.s, tmax); err != nil {
			return r, err
		}
	}
	if len(active) > 0 {
		if r.Active, err = scratch(e.dev, sl.u8, "active", n); err != nil {
			return r, err
		}
		if err = r.Active.Upload(sl.s, boolsToBytes(active)); err != nil {
			return r, err
		}
	}
	return r, nil
}

// withRays takes a free slot, stages a host batch on it and runs fn.
func (e *cudaEngine) withRays(ctx context.Context, o, d, tmax []float32, active []bool, fn func(sl *slot, dr accel.Rays) error) error {
	sl, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(sl)
	dr, err := e.uploadRays(sl, o, d, tmax, active)
	if err != nil {
		return err
	}
	return fn(sl, dr)
}

func (e *cudaEngine) intersect(ctx context.Context, r Rays, flags Flags) (*Hits, error) {
	n := r.Len()
	if n == 0 {
		return geom.NewHits(0, flags), ctx.Err()
	}
	var res *Hits
	err := e.withRays(ctx, r.Origins, r.Directions, r.TMax, r.Active, func(sl *slot, dr accel.Rays) error {
		out, err := hitBuffers(e.dev, sl, n, flags)
		if err != nil {
			return err
		}
		if err := e.bvh.Intersect(sl.s, dr, flags, out); err != nil {
			return err
		}
		res, err = downloadHits(sl.s, out, n, flags)
		return err
	})
	return res, err
}

func (e *cudaEngine) traceReflections(ctx context.Context, r Rays, b int) (*Reflections, error) {
	n := r.Len()
	if n == 0 {
		return geom.NewReflections(0, b), ctx.Err()
	}
	res := geom.NewReflections(n, b)
	err := e.withRays(ctx, r.Origins, r.Directions, r.TMax, r.Active, func(sl *slot, dr accel.Rays) error {
		var out accel.Reflections
		var err error
		if out.Valid, err = scratch(e.dev, sl.u8, "valid", n*b); err != nil {
			return err
		}
		if out.T, err = scratch(e.dev, sl.f32, "t", n*b); err != nil {
			return err
		}
		if out.Prim, err = scratch(e.dev, sl.i32, "prim", n*b); err != nil {
			return err
		}
		if out.Images, err = scratch(e.dev, sl.f32, "images", 3*n*b); err != nil {
			return err
		}
		if err := e.bvh.TraceReflections(sl.s, dr, b, out); err != nil {
			return err
		}
		valid := make([]uint8, n*b)
		for _, step := range []error{
			out.Valid.Download(sl.s, valid), out.T.Download(sl.s, res.T),
			out.Prim.Download(sl.s, res.PrimIDs), out.Images.Download(sl.s, res.ImageSources),
		} {
			if step != nil {
				return step
			}
		}
		for i, v := range valid {
			res.Valid[i] = v != 0
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (e *cudaEngine) visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	n := len(start) / 3
	if n == 0 {
		return []bool{}, ctx.Err()
	}
	res := make([]bool, n)
	err := e.withRays(ctx, start, end, nil, active, func(sl *slot, dr accel.Rays) error {
		out, err := scratch(e.dev, sl.u8, "visible", n)
		if err != nil {
			return err
		}
		seg := accel.Segments{Start: dr.O, End: dr.D, Active: dr.Active, N: n, Counter: sl.counter}
		if err := e.bvh.Visible(sl.s, seg, out); err != nil {
			return err
		}
		vis := make([]uint8, n)
		if err := out.Download(sl.s, vis); err != nil {
			return err
		}
		for i, v := range vis {
			res[i] = v != 0
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (e *cudaEngine) refit(ctx context.Context, _ int, _ []float32, t *geom.Tables) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.bvh.Refit(e.build, t); err != nil {
		return err
	}
	e.edgesRefitted(t)
	return e.build.Synchronize()
}

func (e *cudaEngine) close() error {
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if e.bvh != nil && !isNilTracer(e.bvh) {
		keep(e.bvh.Close())
	}
	if e.edges.bvh != nil {
		keep(e.edges.bvh.Close())
		e.edges.bvh = nil
	}
	if e.blockers.bvh != nil {
		keep(e.blockers.bvh.Close())
		e.blockers.bvh = nil
	}
	close(e.slots)
	for sl := range e.slots {
		for _, b := range sl.f32 {
			keep(b.Close())
		}
		for _, b := range sl.i32 {
			keep(b.Close())
		}
		for _, b := range sl.u8 {
			keep(b.Close())
		}
		keep(sl.counter.Close())
		keep(sl.s.Close())
	}
	if e.build != nil {
		keep(e.build.Close())
	}
	keep(e.dev.Close())
	if len(errs) > 0 {
		return fmt.Errorf("rayd: closing the CUDA scene: %w", errs[0])
	}
	return nil
}

func boolsToBytes(b []bool) []uint8 {
	out := make([]uint8, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}

// isNilTracer reports a typed nil left by a failed build.
func isNilTracer(t tracer) bool {
	switch v := t.(type) {
	case *accel.BVH:
		return v == nil
	case *accel.OptiX:
		return v == nil
	}
	return false
}
