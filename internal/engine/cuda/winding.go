package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
)

// windingChunkWork is the solid angles of one winding launch (rows ×
// faces): a launch takes milliseconds on a current GPU, and ctx is
// checked between launches.
const windingChunkWork = 1 << 30

// windingChunkRows is the rows of one launch over faces faces: at least
// 4096, at most windingChunkWork solid angles where faces allow.
func windingChunkRows(faces int) int {
	return max(4096, windingChunkWork/max(faces, 1))
}

// WindingSums runs the winding kernel over the geometry of the engine's
// triangle BVH (the tracer itself on a BVH engine, the lazily built one on
// an OptiX engine: bvhTree): per point every face's solid angle in float64
// with the reference's operations and order, the device's atan2, and the
// kernel's bound of the distance from the reference sum. The work is rows ×
// faces solid angles on the device, launched in chunks of rows
// (windingChunkRows) with ctx checked between them.
func (e *Engine) WindingSums(ctx context.Context, points []float32, active []bool) (*geom.WindingSums, error) {
	n := len(points) / 3
	w := &geom.WindingSums{Sum: make([]float64, n), Bound: make([]float64, n)}
	if n == 0 {
		return w, ctx.Err()
	}
	tree, err := e.bvhTree()
	if err != nil {
		return nil, err
	}
	chunk := min(n, windingChunkRows(tree.NumTris()))
	if _, err := geom.CheckAlloc("winding device record", e.free(), chunk, 12+1+16); err != nil {
		return nil, err
	}
	err = e.onSlot(ctx, func(sl *slot) error {
		for lo := 0; lo < n; lo += chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(n, lo+chunk)
			if err := e.windingChunk(sl, tree, points[3*lo:3*hi], rows(active, lo, hi), w.Sum[lo:hi], w.Bound[lo:hi]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// windingChunk runs one launch over the rows of points into sum and bound.
func (e *Engine) windingChunk(sl *slot, tree *accel.BVH, points []float32, active []bool, sum, bound []float64) error {
	n := len(points) / 3
	q := accel.WindingPoints{N: n}
	var err error
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
	return steps(func() error { return out.Sum.Download(sl.s, sum) },
		func() error { return out.Bound.Download(sl.s, bound) })
}

// rows is active restricted to [lo, hi), or nil for an empty mask.
func rows(active []bool, lo, hi int) []bool {
	if len(active) == 0 {
		return nil
	}
	return active[lo:hi]
}
