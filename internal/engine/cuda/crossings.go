package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
)

// Crossings runs the crossings kernel over a BVH of the scene: the tracer
// itself on a BVH engine; on an OptiX engine the BVH the visibility
// variants use, built on the first call and refitted after vertex updates
// (sceneBVH). While a mesh mask differs from the default the masked
// kernels run (a face counts only when its mesh mask is not 0). Either way
// every value equals the CPU reference bit for bit.
func (e *Engine) Crossings(ctx context.Context, start, end []float32, active []bool, k int) (*geom.Crossings, error) {
	n := len(start) / 3
	if err := geom.CheckCrossingsK(k); err != nil {
		return nil, err
	}
	if n == 0 {
		return geom.NewCrossings(0, k), ctx.Err()
	}
	if _, err := geom.CheckAlloc("crossings device record", e.free(), n, k*geom.CrossingSlotBytes+4); err != nil {
		return nil, err
	}
	tree, err := e.sceneBVH()
	if err != nil {
		return nil, err
	}
	var res *geom.Crossings
	err = e.withRays(ctx, start, end, nil, active, func(sl *slot, dr accel.Rays) error {
		a := &scratchSet{e: e, sl: sl}
		out := accel.Crossings{T: take(a, sl.f32, "cross_t", n*k), Prim: take(a, sl.i32, "cross_prim", n*k),
			Shape: take(a, sl.i32, "cross_shape", n*k), Count: take(a, sl.i32, "cross_count", n)}
		if a.err != nil {
			return a.err
		}
		seg := accel.Segments{Start: dr.O, End: dr.D, Active: dr.Active, N: n, Counter: sl.counter}
		if err := tree.Crossings(sl.s, seg, k, out); err != nil {
			return err
		}
		c := &geom.Crossings{K: k, T: make([]float32, n*k), Prim: make([]int32, n*k), Shape: make([]int32, n*k),
			Count: make([]int32, n), Overflow: make([]bool, n)}
		if err := steps(func() error { return out.T.Download(sl.s, c.T) }, func() error { return out.Prim.Download(sl.s, c.Prim) },
			func() error { return out.Shape.Download(sl.s, c.Shape) }, func() error { return out.Count.Download(sl.s, c.Count) }); err != nil {
			return err
		}
		c.SetOverflow()
		res = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
