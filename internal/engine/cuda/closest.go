package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
)

// ClosestPoint runs the closest-point query over the engine's triangle
// BVH: the tracer itself on a BVH engine; on an OptiX engine the BVH the
// visibility variants use, built on first use and refitted after vertex
// updates (bvhTree). The kernel walks it persistently with a conservative
// float32 prune and answers every row in float64 exactly as the CPU
// reference does.
func (e *Engine) ClosestPoint(ctx context.Context, points []float32, maxDist float32, active []bool) (*geom.ClosestPoints, error) {
	n := len(points) / 3
	limit, err := geom.CheckMaxDist(maxDist)
	if err != nil {
		return nil, err
	}
	r := geom.NewClosestPointsZeroed(n)
	if n == 0 {
		return r, ctx.Err()
	}
	tree, err := e.bvhTree()
	if err != nil {
		return nil, err
	}
	err = e.onSlot(ctx, func(sl *slot) error {
		q := accel.ClosestPoints{N: n, Limit: limit, Counter: sl.counter}
		if q.P, err = stage(e, sl, sl.f32, "c.p", points); err != nil {
			return err
		}
		if len(active) > 0 {
			if q.Active, err = stage(e, sl, sl.u8, "active", BoolsToBytes(active)); err != nil {
				return err
			}
		}
		a := &scratchSet{e: e, sl: sl}
		out := accel.ClosestOut{Distance: take(a, sl.f32, "c.dist", n), Point: take(a, sl.f32, "c.q", 3*n),
			Bary: take(a, sl.f32, "c.bary", 3*n), ShapeID: take(a, sl.i32, "c.shape", n),
			LocalFaceID: take(a, sl.i32, "c.local", n), GlobalFaceID: take(a, sl.i32, "c.gid", n)}
		if a.err != nil {
			return a.err
		}
		if err := tree.ClosestPoint(sl.s, q, out); err != nil {
			return err
		}
		return steps(func() error { return out.Distance.Download(sl.s, r.Dist) },
			func() error { return out.Point.Download(sl.s, r.Point) },
			func() error { return out.Bary.Download(sl.s, r.Bary) },
			func() error { return out.ShapeID.Download(sl.s, r.ShapeID) },
			func() error { return out.LocalFaceID.Download(sl.s, r.LocalFaceID) },
			func() error { return out.GlobalFaceID.Download(sl.s, r.GlobalFaceID) })
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
