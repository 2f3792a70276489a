package geom

import "math"

// SegmentRay applies the segment rule of visible and crossings (operations
// spec §4.1) to the segment a→b, in float32 with every operation rounded:
//
//	D = b − a;  L = sqrt((Dx² + Dy²) + Dz²)
//	dir = D/L;  origin = a + MultipathBias·dir
//	tmax = max(L − MinSegmentLength, 0)
//
// The segment is blocked by a triangle hit with t ∈ [MultipathTMin, tmax].
// ok is false for a segment with a non-finite coordinate or with
// L ≤ MinSegmentLength (degenerate): such a row is never blocked and has
// no crossings.
func SegmentRay(a, b [3]float32) (origin, dir [3]float32, tmax float32, ok bool) {
	if !IsFinite3(a) || !IsFinite3(b) {
		return origin, dir, 0, false
	}
	D := [3]float32{float32(b[0] - a[0]), float32(b[1] - a[1]), float32(b[2] - a[2])}
	dd := float32(float32(float32(D[0]*D[0])+float32(D[1]*D[1])) + float32(D[2]*D[2]))
	L := float32(math.Sqrt(float64(dd)))
	if L <= MinSegmentLength {
		return origin, dir, 0, false
	}
	for k := range 3 {
		dir[k] = float32(D[k] / L)
		origin[k] = float32(a[k] + float32(MultipathBias*dir[k]))
	}
	return origin, dir, max(float32(L-MinSegmentLength), 0), true
}
