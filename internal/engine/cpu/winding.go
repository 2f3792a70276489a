package cpu

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// WindingSums runs the reference's winding sums (every face for every
// row, in global id order); the bound is 0.
func (e *Engine) WindingSums(ctx context.Context, points []float32, active []bool) (*geom.WindingSums, error) {
	return e.s.WindingSumsContext(ctx, points, active)
}

// WindingSigns decides the winding sign of every row from an engine's sums
// (geom.WindingSign): −1 inside, +1 outside, 0 for an inactive or
// non-finite row. The rows whose bound does not settle the decision (the
// winding number within about faces·2^-40 of 1/2, points on or next to
// the surface) are re-computed on the host with the reference over the
// tables t, by brute force over every face, so every sign is the
// reference's. Errors: a *geom.LengthError for sums of another row count,
// those of the reference, ctx's error once it is done.
func WindingSigns(ctx context.Context, t *geom.Tables, points []float32, active []bool, w *geom.WindingSums) ([]int8, error) {
	n := len(points) / 3
	if w == nil || len(w.Sum) != n || len(w.Bound) != n {
		got := 0
		if w != nil {
			got = min(len(w.Sum), len(w.Bound))
		}
		return nil, &geom.LengthError{Field: "winding sums", Got: got, Want: n}
	}
	sign := make([]int8, n)
	var again []int
	for i := range n {
		s, ok := geom.WindingSign(w.Sum[i], w.Bound[i])
		if !ok {
			again = append(again, i)
			continue
		}
		sign[i] = s
	}
	if len(again) == 0 {
		return sign, ctx.Err()
	}
	pts := make([]float32, 0, 3*len(again))
	for _, i := range again {
		pts = append(pts, points[3*i:3*i+3]...)
	}
	s, err := ref.NewSceneContext(ctx, t, ref.BruteForce())
	if err != nil {
		return nil, err
	}
	exact, err := s.WindingSumsContext(ctx, pts, nil)
	if err != nil {
		return nil, err
	}
	for j, i := range again {
		sign[i], _ = geom.WindingSign(exact.Sum[j], 0)
	}
	return sign, nil
}
