package simdev

import (
	"context"
	"fmt"
	"slices"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// Kernel is a task that the simulated devices run by itself: the built-in
// host tasks of package shard are adapted to it, and tests implement it for
// their own operations (a toy grid_reduce operation, for instance).
type Kernel interface {
	shard.Task
	// Input returns the inputs of rows [lo, hi) of a per_ray task, or the
	// whole inputs of a grid_reduce task (lo = hi = 0), deep-copied when
	// copied is true, and their size in bytes.
	Input(lo, hi int, copied bool) (in any, bytes int)
	// Run executes rows (lanes) [lo, hi) of the call on the reference scene.
	Run(s *ref.Scene, in any, lo, hi int) (out any, err error)
	// Output deep-copies an output (a gather to the master) when copied is
	// true and returns its size in bytes.
	Output(out any, copied bool) (any, int)
	// OutputBytes is the modelled size of the output of rows [lo, hi) of a
	// per_ray task, or of one grid partial (lo = hi = 0); it prices gathers
	// before the output exists.
	OutputBytes(lo, hi int) int
	// Add folds part into acc (grid_reduce), in place, and returns acc.
	Add(acc, part any) (any, error)
}

// kernel is what a replica runs: every Kernel (through sceneKernel), and
// the kernels of package shard's tasks that read more of the device than
// its reference scene (the committed vertices, the edge table and mask).
type kernel interface {
	Input(lo, hi int, copied bool) (in any, bytes int)
	run(d *state, in any, lo, hi int) (any, error)
	Output(out any, copied bool) (any, int)
	OutputBytes(lo, hi int) int
	Add(acc, part any) (any, error)
}

// sceneKernel runs a Kernel on the device's reference scene.
type sceneKernel struct{ Kernel }

func (k sceneKernel) run(d *state, in any, lo, hi int) (any, error) {
	return k.Run(d.scene, in, lo, hi)
}

// kernelOf returns the kernel of a task.
func kernelOf(t shard.Task) (kernel, error) {
	switch t := t.(type) {
	case *shard.Intersect:
		return sceneKernel{intersectKernel{t}}, nil
	case *shard.TraceReflections:
		return sceneKernel{reflectKernel{t}}, nil
	case *shard.Visible:
		return sceneKernel{visibleKernel{t}}, nil
	case Kernel:
		return sceneKernel{t}, nil
	}
	if k, err := rowKernelOf(t); k != nil || err != nil {
		return k, err
	}
	k, err := rfKernelOf(t)
	if err != nil {
		return nil, err
	}
	return sceneKernel{k}, nil
}

// rowKernelOf returns the kernel of a nearest-edge query, a visibility
// variant or a backward pass; nil and no error for any other task.
func rowKernelOf(t shard.Task) (kernel, error) {
	switch t := t.(type) {
	case *shard.NearestEdge:
		return pointEdgeKernel{t}, nil
	case *shard.NearestEdgeRay:
		return rayEdgeKernel{t}, nil
	case *shard.NearestEdges:
		return topKKernel{t}, nil
	case *shard.Crossings:
		return crossingsKernel{t}, nil
	case *shard.ClosestPoint:
		return closestKernel{t}, nil
	case *shard.WindingSums:
		return windingKernel{t}, nil
	case shard.SegmentTask:
		if err := checkSegments(t.SegmentBatch()); err != nil {
			return nil, err
		}
		return segmentKernel{t}, nil
	case *shard.IntersectVJP:
		return intersectVJPKernel{t}, nil
	case *shard.NearestEdgeVJP:
		return pointVJPKernel{t}, nil
	case *shard.NearestEdgeRayVJP:
		return rayVJPKernel{t}, nil
	}
	return nil, nil
}

// rowWidths are the modelled per-row copy sizes of a per_ray task from its
// byte model: the copied inputs (TransferRowBytes − RowBytes) and the
// returned record (ResultRowBytes).
func rowWidths(op shard.Op) (in, out int) {
	res := op.ResultRowBytes
	if res <= 0 {
		res = op.RowBytes
	}
	return max(op.TransferRowBytes-op.RowBytes, 0), res
}

// rows returns rows [lo, hi) of a field of per values per row, deep-copied
// when copied is true; an absent optional field (empty, nil or not) is
// returned as it is.
func rows[T any](v []T, lo, hi, per int, copied bool) []T {
	if len(v) == 0 {
		return v
	}
	return clone(v[per*lo:per*hi], copied)
}

func clone[T any](v []T, copied bool) []T {
	if !copied {
		return v
	}
	return slices.Clone(v)
}

// errPlaced refuses to fold per_ray outputs.
var errPlaced = fmt.Errorf("simdev: per_ray outputs are placed, not folded")

type intersectKernel struct{ *shard.Intersect }

func (k intersectKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in := &shard.Intersect{O: clone(s.O, copied), D: clone(s.D, copied), TMax: clone(s.TMax, copied),
		Active: clone(s.Active, copied), Flags: s.Flags, TMin: clone(s.TMin, copied), Mask: clone(s.Mask, copied)}
	return in, 4*(len(in.O)+len(in.D)+len(in.TMax)+len(in.TMin)) + len(in.Active) + len(in.Mask)
}

func (k intersectKernel) Run(s *ref.Scene, in any, _, _ int) (any, error) {
	t := in.(*shard.Intersect)
	return s.IntersectLimitsContext(context.Background(), t.O, t.D, t.TMax, t.Active,
		geom.RayLimits{TMin: t.TMin, Mask: t.Mask}, t.Flags)
}

func (k intersectKernel) Output(out any, copied bool) (any, int) {
	h := out.(*geom.Hits)
	if copied {
		h = &geom.Hits{Flags: h.Flags, T: clone(h.T, true), P: clone(h.P, true), N: clone(h.N, true),
			GeoN: clone(h.GeoN, true), Bary: clone(h.Bary, true), UV: clone(h.UV, true),
			ShapeID: clone(h.ShapeID, true), PrimID: clone(h.PrimID, true),
			LocalPrimID: clone(h.LocalPrimID, true), GlobalPrimID: clone(h.GlobalPrimID, true)}
	}
	return h, h.Len() * h.RowBytes()
}

func (k intersectKernel) OutputBytes(lo, hi int) int { return (hi - lo) * k.Flags.RowBytes() }

func (intersectKernel) Add(_, _ any) (any, error) { return nil, errPlaced }

type reflectKernel struct{ *shard.TraceReflections }

func (k reflectKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in := &shard.TraceReflections{O: clone(s.O, copied), D: clone(s.D, copied), TMax: clone(s.TMax, copied),
		Active: clone(s.Active, copied), Bounces: s.Bounces, TMin: clone(s.TMin, copied), Mask: clone(s.Mask, copied)}
	return in, 4*(len(in.O)+len(in.D)+len(in.TMax)+len(in.TMin)) + len(in.Active) + len(in.Mask)
}

func (k reflectKernel) Run(s *ref.Scene, in any, _, _ int) (any, error) {
	t := in.(*shard.TraceReflections)
	return s.TraceReflectionsLimitsContext(context.Background(), t.O, t.D, t.TMax, t.Active,
		geom.RayLimits{TMin: t.TMin, Mask: t.Mask}, t.Bounces)
}

func (k reflectKernel) Output(out any, copied bool) (any, int) {
	r := out.(*geom.Reflections)
	if copied {
		r = &geom.Reflections{Bounces: r.Bounces, Valid: clone(r.Valid, true), T: clone(r.T, true),
			PrimIDs: clone(r.PrimIDs, true), ImageSources: clone(r.ImageSources, true)}
	}
	return r, r.Len() * geom.ReflectionRowBytes(r.Bounces, true)
}

func (k reflectKernel) OutputBytes(lo, hi int) int {
	return (hi - lo) * geom.ReflectionRowBytes(k.Bounces, true)
}

func (reflectKernel) Add(_, _ any) (any, error) { return nil, errPlaced }

type visibleKernel struct{ *shard.Visible }

func (k visibleKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in := &shard.Visible{Start: clone(s.Start, copied), End: clone(s.End, copied), Active: clone(s.Active, copied)}
	return in, 4*(len(in.Start)+len(in.End)) + len(in.Active)
}

func (k visibleKernel) Run(s *ref.Scene, in any, _, _ int) (any, error) {
	t := in.(*shard.Visible)
	return s.Visible(t.Start, t.End, t.Active)
}

func (k visibleKernel) Output(out any, copied bool) (any, int) {
	v := clone(out.([]bool), copied)
	return v, len(v)
}

func (visibleKernel) OutputBytes(lo, hi int) int { return hi - lo }

func (visibleKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
