package rayd

import (
	"context"
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// edgeEngine is implemented by engines that answer the nearest-edge queries
// on a device. The scene's edge table and mask (es) are the host truth; gen
// counts the mask changes so the device copy is refreshed only when needed.
// The table is validated once, when the device BVH is built from it (the
// scene never changes it); each query validates only its batch.
type edgeEngine interface {
	nearestEdge(ctx context.Context, es *edge.Scene, gen uint64, points []float32, active []bool) (*NearestPointEdge, error)
	nearestEdgeRay(ctx context.Context, es *edge.Scene, gen uint64, r Rays) (*NearestRayEdge, error)
	nearestEdges(ctx context.Context, es *edge.Scene, gen uint64, points []float32, k int, active []bool) (*NearestEdgesTopK, error)
}

// deviceEdges is a CUDA engine's edge BVH, built on the first edge query and
// kept in step with the scene's vertices and edge mask.
type deviceEdges struct {
	mu    sync.Mutex
	bvh   *accel.EdgeBVH
	gen   uint64 // mask generation on the device
	stale bool   // vertices changed since the build or the last refit
}

// prepare builds, refits and re-masks the edge BVH as needed on the build
// stream and waits for it, so that queries on any slot stream see it. The
// scene's read lock is held: no vertex update or mask change can overlap.
func (e *cudaEngine) prepareEdges(es *edge.Scene, gen uint64) (*accel.EdgeBVH, error) {
	de := &e.edges
	de.mu.Lock()
	defer de.mu.Unlock()
	changed := false
	if de.bvh == nil {
		b, err := accel.BuildEdges(e.build, es.Tables.Vertices, accel.EdgeTablesOf(es.Edges))
		if err != nil {
			return nil, fmt.Errorf("rayd: building the edge BVH on %v: %w", e.dev, err)
		}
		de.bvh, de.gen, de.stale, changed = b, 0, false, true
	}
	if de.stale {
		if err := de.bvh.Refit(e.build, es.Tables.Vertices); err != nil {
			return nil, err
		}
		de.stale, changed = false, true
	}
	if de.gen != gen {
		if err := de.bvh.SetMask(e.build, es.Mask); err != nil {
			return nil, err
		}
		de.gen, changed = gen, true
	}
	if changed {
		if err := e.build.Synchronize(); err != nil {
			return nil, err
		}
	}
	return de.bvh, nil
}

// upload stages src in the named scratch buffer of the slot.
func stage[T launch.Elem](e *cudaEngine, sl *slot, m map[string]*launch.Buffer[T], name string, src []T) (*launch.Buffer[T], error) {
	b, err := scratch(e.dev, m, name, len(src))
	if err != nil {
		return nil, err
	}
	if len(src) > 0 {
		err = b.Upload(sl.s, src)
	}
	return b, err
}

// scratchSet hands out named scratch views of a slot and keeps the first
// error (later takes return nil).
type scratchSet struct {
	e   *cudaEngine
	sl  *slot
	err error
}

func take[T launch.Elem](a *scratchSet, m map[string]*launch.Buffer[T], name string, n int) *launch.Buffer[T] {
	if a.err != nil {
		return nil
	}
	b, err := scratch(a.e.dev, m, name, n)
	a.err = err
	return b
}

// downloads runs the copies in order and stops at the first failure.
func downloads(steps ...func() error) error {
	for _, f := range steps {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func (e *cudaEngine) edgePoints(sl *slot, points []float32, active []bool) (accel.EdgePoints, error) {
	q := accel.EdgePoints{N: len(points) / 3}
	var err error
	if q.P, err = stage(e, sl, sl.f32, "e.p", points); err != nil {
		return q, err
	}
	if len(active) > 0 {
		q.Active, err = stage(e, sl, sl.u8, "active", boolsToBytes(active))
	}
	return q, err
}

func (e *cudaEngine) nearestEdge(ctx context.Context, es *edge.Scene, gen uint64, points []float32, active []bool) (*NearestPointEdge, error) {
	n, err := edge.CheckPointBatch(points, active)
	if err != nil || n == 0 {
		return edge.NewPointResult(n), firstNonNil(err, ctx.Err())
	}
	r := edge.NewPointResult(n)
	err = e.withEdgePoints(ctx, es, gen, points, active, func(b *accel.EdgeBVH, sl *slot, q accel.EdgePoints) error {
		a := &scratchSet{e: e, sl: sl}
		out := accel.EdgePointOut{Distance: take(a, sl.f32, "e.dist", n), EdgePoint: take(a, sl.f32, "e.q", 3*n),
			EdgeT: take(a, sl.f32, "e.s", n), ShapeID: take(a, sl.i32, "e.shape", n), EdgeID: take(a, sl.i32, "e.local", n),
			GlobalEdgeID: take(a, sl.i32, "e.gid", n)}
		if a.err != nil {
			return a.err
		}
		if err := b.NearestPoint(sl.s, q, out); err != nil {
			return err
		}
		return downloads(func() error { return out.Distance.Download(sl.s, r.Distance) },
			func() error { return out.EdgePoint.Download(sl.s, r.EdgePoint) },
			func() error { return out.EdgeT.Download(sl.s, r.EdgeT) },
			func() error { return out.ShapeID.Download(sl.s, r.ShapeID) },
			func() error { return out.EdgeID.Download(sl.s, r.EdgeID) },
			func() error { return out.GlobalEdgeID.Download(sl.s, r.GlobalEdgeID) })
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// withEdgePoints readies the edge BVH, takes a slot, stages the points and
// runs fn.
func (e *cudaEngine) withEdgePoints(ctx context.Context, es *edge.Scene, gen uint64, points []float32, active []bool,
	fn func(b *accel.EdgeBVH, sl *slot, q accel.EdgePoints) error) error {
	b, err := e.prepareEdges(es, gen)
	if err != nil {
		return err
	}
	sl, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(sl)
	q, err := e.edgePoints(sl, points, active)
	if err != nil {
		return err
	}
	return fn(b, sl, q)
}

func (e *cudaEngine) nearestEdgeRay(ctx context.Context, es *edge.Scene, gen uint64, r Rays) (*NearestRayEdge, error) {
	n, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active)
	if err != nil || n == 0 {
		return edge.NewRayResult(n), firstNonNil(err, ctx.Err())
	}
	b, err := e.prepareEdges(es, gen)
	if err != nil {
		return nil, err
	}
	res := edge.NewRayResult(n)
	err = e.withRays(ctx, r.Origins, r.Directions, r.TMax, r.Active, func(sl *slot, dr accel.Rays) error {
		a := &scratchSet{e: e, sl: sl}
		out := accel.EdgeRayOut{Distance: take(a, sl.f32, "e.dist", n), RayT: take(a, sl.f32, "e.t", n),
			Point: take(a, sl.f32, "e.p3", 3*n), EdgeT: take(a, sl.f32, "e.s", n), EdgePoint: take(a, sl.f32, "e.q", 3*n),
			ShapeID: take(a, sl.i32, "e.shape", n), EdgeID: take(a, sl.i32, "e.local", n), GlobalEdgeID: take(a, sl.i32, "e.gid", n)}
		if a.err != nil {
			return a.err
		}
		if err := b.NearestRay(sl.s, dr, out); err != nil {
			return err
		}
		return downloads(func() error { return out.Distance.Download(sl.s, res.Distance) },
			func() error { return out.RayT.Download(sl.s, res.RayT) },
			func() error { return out.Point.Download(sl.s, res.Point) },
			func() error { return out.EdgeT.Download(sl.s, res.EdgeT) },
			func() error { return out.EdgePoint.Download(sl.s, res.EdgePoint) },
			func() error { return out.ShapeID.Download(sl.s, res.ShapeID) },
			func() error { return out.EdgeID.Download(sl.s, res.EdgeID) },
			func() error { return out.GlobalEdgeID.Download(sl.s, res.GlobalEdgeID) })
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (e *cudaEngine) nearestEdges(ctx context.Context, es *edge.Scene, gen uint64, points []float32, k int, active []bool) (*NearestEdgesTopK, error) {
	if err := edge.CheckK(k); err != nil {
		return nil, err
	}
	n, err := edge.CheckPointBatch(points, active)
	if err != nil || n == 0 {
		return edge.NewTopK(n, k), firstNonNil(err, ctx.Err())
	}
	m := n * k
	r := edge.NewTopK(n, k)
	valid, bnd := make([]uint8, m), make([]uint8, m)
	err = e.withEdgePoints(ctx, es, gen, points, active, func(b *accel.EdgeBVH, sl *slot, q accel.EdgePoints) error {
		a := &scratchSet{e: e, sl: sl}
		out := accel.EdgeTopKOut{Valid: take(a, sl.u8, "e.valid", m), Boundary: take(a, sl.u8, "e.bnd", m),
			Distance: take(a, sl.f32, "e.dist", m), Point: take(a, sl.f32, "e.p3", 3*m), EdgeT: take(a, sl.f32, "e.s", m),
			EdgePoint: take(a, sl.f32, "e.q", 3*m), ShapeID: take(a, sl.i32, "e.shape", m), EdgeID: take(a, sl.i32, "e.local", m),
			GlobalEdgeID: take(a, sl.i32, "e.gid", m)}
		if a.err != nil {
			return a.err
		}
		if err := b.NearestK(sl.s, q, k, out); err != nil {
			return err
		}
		return downloads(func() error { return out.Valid.Download(sl.s, valid) },
			func() error { return out.Boundary.Download(sl.s, bnd) },
			func() error { return out.Distance.Download(sl.s, r.Distance) },
			func() error { return out.Point.Download(sl.s, r.Point) },
			func() error { return out.EdgeT.Download(sl.s, r.EdgeT) },
			func() error { return out.EdgePoint.Download(sl.s, r.EdgePoint) },
			func() error { return out.ShapeID.Download(sl.s, r.ShapeID) },
			func() error { return out.EdgeID.Download(sl.s, r.EdgeID) },
			func() error { return out.GlobalEdgeID.Download(sl.s, r.GlobalEdgeID) })
	})
	if err != nil {
		return nil, err
	}
	for j := range m {
		r.Valid[j], r.Boundary[j] = valid[j] != 0, bnd[j] != 0
	}
	return r, nil
}

// edgesRefitted marks the edge BVH and the visibility BVH stale after a
// vertex update (the scene's write lock is held); the next query refits them.
func (e *cudaEngine) edgesRefitted(_ *geom.Tables) {
	e.edges.mu.Lock()
	e.edges.stale = e.edges.bvh != nil
	e.edges.mu.Unlock()
	e.blockers.mu.Lock()
	e.blockers.stale = e.blockers.bvh != nil
	e.blockers.mu.Unlock()
}

func firstNonNil(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
