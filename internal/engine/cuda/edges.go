package cuda

import (
	"context"
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// deviceEdges is the engine's edge BVH, built on the first edge query and
// kept in step with the scene's vertices and edge mask.
type deviceEdges struct {
	mu    sync.Mutex
	bvh   *accel.EdgeBVH
	gen   uint64 // mask generation on the device
	stale bool   // vertices changed since the build or the last refit
}

func (de *deviceEdges) markStale() {
	de.mu.Lock()
	de.stale = de.bvh != nil
	de.mu.Unlock()
}

func (de *deviceEdges) drop() error {
	de.mu.Lock()
	defer de.mu.Unlock()
	if de.bvh == nil {
		return nil
	}
	err := de.bvh.Close()
	de.bvh = nil
	return err
}

// prepareEdges builds, refits and re-masks the edge BVH as needed on the
// build stream and waits for it, so that queries on any slot stream see
// it. The table is validated once, when the BVH is built from it (the scene
// never changes it); each query validates only its batch. The scene's read
// lock is held: no vertex update or mask change can overlap.
func (e *Engine) prepareEdges(ed engine.Edges) (*accel.EdgeBVH, error) {
	de := &e.edges
	de.mu.Lock()
	defer de.mu.Unlock()
	es := ed.Scene
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
	if de.gen != ed.Gen {
		if err := de.bvh.SetMask(e.build, es.Mask); err != nil {
			return nil, err
		}
		de.gen, changed = ed.Gen, true
	}
	if changed {
		if err := e.build.Synchronize(); err != nil {
			return nil, err
		}
	}
	return de.bvh, nil
}

// SetEdgeMask has nothing to do now: the next edge query uploads the mask
// (its generation changed).
func (e *Engine) SetEdgeMask(ctx context.Context, _ engine.Edges) error { return ctx.Err() }

// withEdges readies the edge BVH, takes a slot and runs fn.
func (e *Engine) withEdges(ctx context.Context, ed engine.Edges, fn func(b *accel.EdgeBVH, sl *slot) error) error {
	b, err := e.prepareEdges(ed)
	if err != nil {
		return err
	}
	return e.onSlot(ctx, func(sl *slot) error { return fn(b, sl) })
}

func (e *Engine) edgePoints(sl *slot, points []float32, active []bool) (accel.EdgePoints, error) {
	q := accel.EdgePoints{N: len(points) / 3}
	var err error
	if q.P, err = stage(e, sl, sl.f32, "e.p", points); err != nil {
		return q, err
	}
	if len(active) > 0 {
		q.Active, err = stage(e, sl, sl.u8, "active", BoolsToBytes(active))
	}
	return q, err
}

// NearestEdge runs the point query on the edge BVH.
func (e *Engine) NearestEdge(ctx context.Context, ed engine.Edges, points []float32, active []bool) (*edge.PointResult, error) {
	n := len(points) / 3
	r := edge.NewPointResult(n)
	if n == 0 {
		return r, ctx.Err()
	}
	err := e.withEdges(ctx, ed, func(b *accel.EdgeBVH, sl *slot) error {
		q, err := e.edgePoints(sl, points, active)
		if err != nil {
			return err
		}
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
		return steps(func() error { return out.Distance.Download(sl.s, r.Distance) },
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

// NearestEdgeRay runs the ray/segment query on the edge BVH.
func (e *Engine) NearestEdgeRay(ctx context.Context, ed engine.Edges, r engine.Rays) (*edge.RayResult, error) {
	n := r.Len()
	res := edge.NewRayResult(n)
	if n == 0 {
		return res, ctx.Err()
	}
	err := e.withEdges(ctx, ed, func(b *accel.EdgeBVH, sl *slot) error {
		dr, err := e.uploadRays(sl, r.Origins, r.Directions, r.TMax, r.Active)
		if err != nil {
			return err
		}
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
		return steps(func() error { return out.Distance.Download(sl.s, res.Distance) },
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

// NearestEdges runs the top-k query on the edge BVH.
func (e *Engine) NearestEdges(ctx context.Context, ed engine.Edges, points []float32, k int, active []bool) (*edge.TopK, error) {
	n := len(points) / 3
	if err := edge.CheckTopK(n, k, e.free()); err != nil {
		return nil, err
	}
	m := n * k
	r := edge.NewTopK(n, k)
	if n == 0 {
		return r, ctx.Err()
	}
	valid, bnd := make([]uint8, m), make([]uint8, m)
	err := e.withEdges(ctx, ed, func(b *accel.EdgeBVH, sl *slot) error {
		q, err := e.edgePoints(sl, points, active)
		if err != nil {
			return err
		}
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
		return steps(func() error { return out.Valid.Download(sl.s, valid) },
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
	copy(r.Valid, bytesToBools(valid))
	copy(r.Boundary, bytesToBools(bnd))
	return r, nil
}

// NearestEdgeVJP runs the point backward pass on the device (float64 rows,
// float64 atomic vertex sums).
func (e *Engine) NearestEdgeVJP(ctx context.Context, ed engine.Edges, points []float32, gid []int32, g edge.PointCotangent) (*shard.EdgePointGrads, error) {
	n := len(points) / 3
	res := &shard.EdgePointGrads{Points: make([]float64, 3*n), Vertices: make([]float64, 3*e.tables.NumVertices())}
	err := e.withEdges(ctx, ed, func(b *accel.EdgeBVH, sl *slot) error {
		var pts *launch.Buffer[float32]
		var ids *launch.Buffer[int32]
		var grad accel.EdgePointGrad
		err := steps(func() (err error) { pts, err = stage(e, sl, sl.f32, "e.p", points); return },
			func() (err error) { ids, err = stage(e, sl, sl.i32, "e.gid", gid); return },
			func() (err error) { grad.Distance, err = stageOpt(e, sl, sl.f64, "g.dist", g.Distance); return },
			func() (err error) { grad.EdgePoint, err = stageOpt(e, sl, sl.f64, "g.q", g.EdgePoint); return },
			func() (err error) { grad.EdgeT, err = stageOpt(e, sl, sl.f64, "g.s", g.EdgeT); return })
		if err != nil {
			return err
		}
		a := &scratchSet{e: e, sl: sl}
		dp, dv := take(a, sl.f64, "vjp.dp", 3*n), take(a, sl.f64, "vjp.dv", len(res.Vertices))
		if a.err != nil {
			return a.err
		}
		if err := b.PointVJP(sl.s, pts, ids, n, grad, dp, dv); err != nil {
			return err
		}
		return steps(func() error { return dp.Download(sl.s, res.Points) },
			func() error { return dv.Download(sl.s, res.Vertices) })
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// NearestEdgeRayVJP runs the ray backward pass on the device.
func (e *Engine) NearestEdgeRayVJP(ctx context.Context, ed engine.Edges, r engine.Rays, gid []int32, g edge.RayCotangent) (*shard.EdgeRayGrads, error) {
	n := r.Len()
	res := &shard.EdgeRayGrads{Origins: make([]float64, 3*n), Directions: make([]float64, 3*n),
		Vertices: make([]float64, 3*e.tables.NumVertices())}
	err := e.withEdges(ctx, ed, func(b *accel.EdgeBVH, sl *slot) error {
		dr, err := e.uploadRays(sl, r.Origins, r.Directions, r.TMax, nil)
		if err != nil {
			return err
		}
		var ids *launch.Buffer[int32]
		var grad accel.EdgeRayGrad
		err = steps(func() (err error) { ids, err = stage(e, sl, sl.i32, "e.gid", gid); return },
			func() (err error) { grad.Distance, err = stageOpt(e, sl, sl.f64, "g.dist", g.Distance); return },
			func() (err error) { grad.RayT, err = stageOpt(e, sl, sl.f64, "g.t", g.RayT); return },
			func() (err error) { grad.Point, err = stageOpt(e, sl, sl.f64, "g.p", g.Point); return },
			func() (err error) { grad.EdgeT, err = stageOpt(e, sl, sl.f64, "g.s", g.EdgeT); return },
			func() (err error) { grad.EdgePoint, err = stageOpt(e, sl, sl.f64, "g.q", g.EdgePoint); return })
		if err != nil {
			return err
		}
		a := &scratchSet{e: e, sl: sl}
		do, dd := take(a, sl.f64, "vjp.do", 3*n), take(a, sl.f64, "vjp.dd", 3*n)
		dv := take(a, sl.f64, "vjp.dv", len(res.Vertices))
		if a.err != nil {
			return a.err
		}
		if err := b.RayVJP(sl.s, dr, ids, grad, do, dd, dv); err != nil {
			return err
		}
		return steps(func() error { return do.Download(sl.s, res.Origins) },
			func() error { return dd.Download(sl.s, res.Directions) },
			func() error { return dv.Download(sl.s, res.Vertices) })
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
