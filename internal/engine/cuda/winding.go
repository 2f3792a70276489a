package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
)

// WindingSums runs the winding kernel over the geometry of the engine's
// triangle BVH (the tracer itself on a BVH engine, the lazily built one on
// an OptiX engine: bvhTree): per point every face's solid angle in float64
// with the reference's operations and order, the device's atan2, and the
// kernel's bound of the distance from the reference sum. The work is rows ×
// faces solid angles on the device.
func (e *Engine) WindingSums(ctx context.Context, points []float32, active []bool) (*geom.WindingSums, error) {
	n := len(points) / 3
	w := &geom.WindingSums{Sum: make([]float64, n), Bound: make([]float64, n)}
	if n == 0 {
		return w, ctx.Err()
	}
	if _, err := geom.CheckAlloc("winding device record", e.free(), n, 12+1+16); err != nil {
		return nil, err
	}
	tree, err := e.bvhTree()
	if err != nil {
		return nil, err
	}
	err = e.onSlot(ctx, func(sl *slot) error {
		q := accel.WindingPoints{N: n}
		if q.P, err = stage(e, sl, sl.f32, "w.p", points); err != nil {
			return err
		}
		if len(active) > 0 {
			if q.Active, err = stage(e, sl, sl.u8, "active", BoolsToBytes(active)); err != nil {
				return err
			}
		}
		a := &scratchSet{e: e, sl: sl}
		out := accel.WindingOut{Sum: take(a, sl.f64, "w.sum", n), Bound: take(a, sl.f64, "w.bound", n)}
		if a.err != nil {
			return a.err
		}
		if err := tree.WindingSums(sl.s, q, out); err != nil {
			return err
		}
		return steps(func() error { return out.Sum.Download(sl.s, w.Sum) },
			func() error { return out.Bound.Download(sl.s, w.Bound) })
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}
