package ref

import (
	"math"

	"github.com/rayd-go/rayd/geom"
)

// Visible is visible(start, end) (spec §4.1): per row, whether the segment
// from start to end is unobstructed. In float32:
//
//	D = end − start;  L = sqrt((Dx² + Dy²) + Dz²)
//	L ≤ geom.MinSegmentLength                 ⇒ true (degenerate segment)
//	dir = D/L;  origin = start + geom.MultipathBias·dir
//	tmax = max(L − geom.MinSegmentLength, 0)
//	visible = no triangle hit with t ∈ [geom.MultipathTMin, tmax]
//
// Inactive rows are false. Rows with a non-finite coordinate find no hit
// and are reported visible (a miss, as for intersect). Errors: a
// *LengthError for mismatched slices; an empty batch returns an empty
// slice.
func (s *Scene) Visible(start, end []float32, active []bool) ([]bool, error) {
	n, err := geom.CheckSegments(start, end, active)
	if err != nil {
		return nil, err
	}
	out := make([]bool, n)
	if n == 0 {
		return out, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	parallelRows(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if len(active) > 0 && !active[i] {
				continue
			}
			out[i] = s.segmentVisible(row3(start, i), row3(end, i))
		}
	})
	return out, nil
}

func (s *Scene) segmentVisible(a, b [3]float32) bool {
	if !geom.IsFinite3(a) || !geom.IsFinite3(b) {
		return true
	}
	D := [3]float32{float32(b[0] - a[0]), float32(b[1] - a[1]), float32(b[2] - a[2])}
	L := float32(math.Sqrt(float64(dot3(D, D))))
	if L <= geom.MinSegmentLength {
		return true
	}
	var dir, origin [3]float32
	for k := range 3 {
		dir[k] = float32(D[k] / L)
		origin[k] = float32(a[k] + float32(geom.MultipathBias*dir[k]))
	}
	tmax := max(float32(L-geom.MinSegmentLength), 0)
	return !s.anyHit(origin, dir, geom.MultipathTMin, tmax)
}
