// Package cuda is the engine of one CUDA device: it runs every Scene
// operation on the kernels of package accel over the device's
// acceleration structure, behind the tracer seam (rayd-go's BVH, or OptiX
// on GPUs with RT cores). Queries run on a pool of stream slots, each with
// grow-only scratch buffers, so concurrent queries overlap and a steady
// stream of calls allocates nothing. The nearest-edge queries run over an
// edge BVH built on the first edge query; OptiX scenes build a BVH on first
// use for the visibility variants and the RF operations, whose kernels are
// BVH kernels.
//
// Place in the package graph: cuda → engine, accel, launch, shard (record
// types), edge, rf, geom.
package cuda

import (
	"context"
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
)

// Slots is how many queries one engine runs at once; each slot owns a
// non-blocking stream and grow-only scratch buffers.
const Slots = 4

// Kind selects the tracer.
type Kind int

const (
	// BVH is rayd-go's own BVH (accel.BVH).
	BVH Kind = iota
	// OptiX is NVIDIA OptiX (accel.OptiX).
	OptiX
)

// String returns "bvh" or "optix".
func (k Kind) String() string {
	if k == OptiX {
		return "optix"
	}
	return "bvh"
}

// tracer is one device's acceleration structure with its query launchers:
// rayd-go's BVH (accel.BVH) or OptiX (accel.OptiX). Both write the same
// device records and both carry the intersect VJP.
type tracer interface {
	Intersect(s *launch.Stream, r accel.Rays, flags geom.Flags, out accel.Hits) error
	TraceReflections(s *launch.Stream, r accel.Rays, maxBounces int, out accel.Reflections) error
	Visible(s *launch.Stream, seg accel.Segments, out *launch.Buffer[uint8]) error
	IntersectVJP(s *launch.Stream, r accel.Rays, tape accel.Tape, g accel.Cotangents, out accel.Grads) error
	NumVertices() int
	Refit(s *launch.Stream, t *geom.Tables) error
	Close() error
}

// Engine runs a scene on one CUDA device.
type Engine struct {
	kind     Kind
	tables   *geom.Tables
	dev      *launch.Device
	build    *launch.Stream
	tr       tracer
	slots    chan *slot
	edges    deviceEdges // built on the first edge query
	blockers blockerBVH  // OptiX engines: the BVH of the visibility variants and RF
	inst     *instances  // the instance layer of a scene with instances, or nil
}

var _ engine.Engine = (*Engine)(nil)

// slot is one query lane: a stream, the persistent-launch counter and
// scratch buffers reused across calls (grown, never shrunk).
type slot struct {
	s       *launch.Stream
	counter *launch.Buffer[uint32]
	f32     map[string]*launch.Buffer[float32]
	f64     map[string]*launch.Buffer[float64]
	i32     map[string]*launch.Buffer[int32]
	u8      map[string]*launch.Buffer[uint8]
}

// New opens device ordinal and builds t's acceleration structure there. A
// device that cannot be opened is an error matching
// engine.ErrBackendUnavailable. The engine reads t at every refit: the
// façade updates it in place.
func New(ctx context.Context, t *geom.Tables, ordinal int, kind Kind) (_ *Engine, err error) {
	dev, err := launch.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: CUDA device %d: %w", engine.ErrBackendUnavailable, ordinal, err)
	}
	e := &Engine{kind: kind, tables: t, dev: dev, slots: make(chan *slot, Slots)}
	defer func() {
		if err != nil {
			_ = e.Close()
		}
	}()
	if e.build, err = dev.NewStream(); err != nil {
		return nil, err
	}
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	if e.tr, err = e.newTracer(); err != nil {
		return nil, err
	}
	for range Slots {
		sl := &slot{f32: map[string]*launch.Buffer[float32]{}, f64: map[string]*launch.Buffer[float64]{},
			i32: map[string]*launch.Buffer[int32]{}, u8: map[string]*launch.Buffer[uint8]{}}
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

// newTracer builds the tracer of e's kind from the tables on the build
// stream.
func (e *Engine) newTracer() (tracer, error) {
	var tr tracer
	var err error
	if e.kind == OptiX {
		var o *accel.OptiX
		if o, err = accel.BuildOptiX(e.build, e.tables); err == nil {
			tr = o
		}
	} else {
		var b *accel.BVH
		if b, err = accel.Build(e.build, e.tables); err == nil {
			tr = b
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rayd: building the acceleration structure on %v: %w", e.dev, err)
	}
	return e.withMasks(tr)
}

// Describe returns "cuda:N (bvh)" or "cuda:N (optix)".
func (e *Engine) Describe() string { return fmt.Sprintf("%v (%s)", e.dev, e.kind) }

// Kind returns the tracer kind.
func (e *Engine) Kind() Kind { return e.kind }

// Ordinal returns the device ordinal.
func (e *Engine) Ordinal() int { return e.dev.Ordinal() }

// acquire takes a free slot, honouring ctx while waiting.
func (e *Engine) acquire(ctx context.Context) (*slot, error) {
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

func (e *Engine) release(sl *slot) { e.slots <- sl }

// onSlot runs fn on a free slot.
func (e *Engine) onSlot(ctx context.Context, fn func(sl *slot) error) error {
	sl, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(sl)
	return fn(sl)
}

// Refit refits the tracer to the updated tables and marks the edge and
// blocker BVHs stale (the next query refits them).
func (e *Engine) Refit(ctx context.Context, _ int, _ []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.tr.Refit(e.build, e.tables); err != nil {
		return err
	}
	e.edges.markStale()
	e.blockers.markStale()
	return e.build.Synchronize()
}

// Rebuild rebuilds the tracer from the tables and drops the edge and
// blocker BVHs (rebuilt on first use).
func (e *Engine) Rebuild(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tr, err := e.newTracer()
	if err != nil {
		return err
	}
	if err := e.build.Synchronize(); err != nil {
		return errors.Join(err, tr.Close())
	}
	old := e.tr
	e.tr = tr
	return errors.Join(old.Close(), e.edges.drop(), e.blockers.drop())
}

// Close releases the device structures, the slots and the device.
func (e *Engine) Close() error {
	var errs []error
	if e.tr != nil {
		errs = append(errs, e.tr.Close())
	}
	errs = append(errs, e.edges.drop(), e.blockers.drop(), e.closeInstances())
	close(e.slots)
	for sl := range e.slots {
		for _, b := range sl.f32 {
			errs = append(errs, b.Close())
		}
		for _, b := range sl.f64 {
			errs = append(errs, b.Close())
		}
		for _, b := range sl.i32 {
			errs = append(errs, b.Close())
		}
		for _, b := range sl.u8 {
			errs = append(errs, b.Close())
		}
		errs = append(errs, sl.counter.Close(), sl.s.Close())
	}
	if e.build != nil {
		errs = append(errs, e.build.Close())
	}
	errs = append(errs, e.dev.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rayd: closing the CUDA scene: %w", err)
	}
	return nil
}
