package ref

import (
	"context"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// WindingNumbers is WindingNumbersContext with context.Background().
func (s *Scene) WindingNumbers(points []float32, active []bool) ([]float32, error) {
	return s.WindingNumbersContext(context.Background(), points, active)
}

// WindingNumbersContext returns, for each row of points (3 values per
// row), the generalized winding number of the scene's faces around the
// point: the sum over every face of its signed solid angle seen from the
// point, divided by 4π. A face counts positively when the point lies
// behind it, on the side opposite its normal (v1−v0)×(v2−v0), so a point inside a closed mesh whose faces are
// oriented outward has winding number 1, a point outside 0, and a point
// inside k nested closed meshes k. Open meshes and soups give fractional
// values that still separate the two sides robustly (unlike the parity of
// a ray's crossing count): a caller signs a closest-point distance −1 where
// the winding number exceeds 1/2 and +1 elsewhere.
//
// Each solid angle is the Van Oosterom–Strackee formula
// 2·atan2(a·(b×c), |a||b||c| + (a·b)|c| + (a·c)|b| + (b·c)|a|) in float64
// with a, b, c the vertices less the point. A point on a face sees that
// face as a half sphere or as nothing, as the rounding of the signs
// decides, so there the winding number is off by up to 1/2 (and the
// closest-point distance is 0, so no sign is needed). The faces are summed
// in global id order in float64 and the sum is rounded once. Every face is visited for every row (no BVH), so the
// cost is rows × faces.
//
// active holds one value per row or is empty (all active); an inactive row
// or one with a non-finite coordinate holds NaN. Errors: a *LengthError
// (ErrLength) for mismatched slices. ctx is checked before the result is
// allocated and between blocks of rows; once it is done the call returns
// no result and an error wrapping ctx.Err().
func (s *Scene) WindingNumbersContext(ctx context.Context, points []float32, active []bool) ([]float32, error) {
	n, err := geom.CheckPoints(points, active)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: winding numbers cancelled: %w", err)
	}
	w := make([]float32, n)
	if n == 0 {
		return w, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "winding numbers", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := row3(points, i)
			if (len(active) > 0 && !active[i]) || !geom.IsFinite3(p) {
				w[i] = float32(math.NaN())
				continue
			}
			w[i] = float32(s.winding(widen(p)))
		}
	}); err != nil {
		return nil, err
	}
	return w, nil
}

// WindingSumsContext returns, for each row, the float64 sum of the faces'
// solid angles of WindingNumbersContext before its division by 4π
// (geom.WindingFourPi), with Bound 0: the exact reference sum. The winding
// number is float32(Sum/4π); geom.WindingInside decides the sign from it.
// Inactive and non-finite rows hold NaN. Errors and cancellation as
// WindingNumbersContext.
func (s *Scene) WindingSumsContext(ctx context.Context, points []float32, active []bool) (*geom.WindingSums, error) {
	n, err := geom.CheckPoints(points, active)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: winding numbers cancelled: %w", err)
	}
	w := &geom.WindingSums{Sum: make([]float64, n), Bound: make([]float64, n)}
	if n == 0 {
		return w, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "winding numbers", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := row3(points, i)
			if (len(active) > 0 && !active[i]) || !geom.IsFinite3(p) {
				w.Sum[i] = math.NaN()
				continue
			}
			w.Sum[i] = s.windingSum(widen(p))
		}
	}); err != nil {
		return nil, err
	}
	return w, nil
}

// winding is the generalized winding number at p in float64.
func (s *Scene) winding(p pvec) float64 {
	return s.windingSum(p) / geom.WindingFourPi
}

// windingSum is the sum of the faces' solid angles at p, in global id
// order, each added to the running float64 sum.
func (s *Scene) windingSum(p pvec) float64 {
	sum := 0.0
	for f := range s.tris {
		tr := &s.tris[f]
		sum += solidAngle(psub(widen(tr[0]), p), psub(widen(tr[1]), p), psub(widen(tr[2]), p))
	}
	return sum
}

// solidAngle is the signed solid angle of the triangle (a, b, c) seen from
// the origin (Van Oosterom and Strackee, 1983), with every product rounded
// before it is summed.
func solidAngle(a, b, c pvec) float64 {
	la, lb, lc := math.Sqrt(pdot(a, a)), math.Sqrt(pdot(b, b)), math.Sqrt(pdot(c, c))
	bc := pvec{float64(b[1]*c[2]) - float64(b[2]*c[1]), float64(b[2]*c[0]) - float64(b[0]*c[2]),
		float64(b[0]*c[1]) - float64(b[1]*c[0])}
	num := pdot(a, bc)
	den := float64(float64(float64(la*lb)*lc)+float64(pdot(a, b)*lc)) + float64(pdot(a, c)*lb) + float64(pdot(b, c)*la)
	return 2 * math.Atan2(num, den)
}
