package geom

import (
	"math"
)

// The inside/outside tests of the closest-point sign, defined so that every
// engine answers them with its own kernels.
//
// Parity: the crossing count of a point p is the Count of the crossings
// query (Visible's segment rule, see Crossings) over the segment p → e with
// e = ParityEnd(p, reach): every face whose watertight test accepts a t in
// [MultipathTMin, L − MinSegmentLength] along the float32 unit direction
// of e − p from the biased origin p + MultipathBias·dir. Since every engine
// answers the crossings query bit for bit, every engine gives the same
// count. Consequences of the segment rule, all decided by the watertight
// test: a face within 2e-5 of p along the segment (a point on a face) is
// not counted; a segment through a shared edge or vertex counts each face
// whose watertight test accepts it (at least one of them), so the parity is
// exact for segments that cross faces in their interiors.
//
// Winding: the generalized winding number of the reference (float64 sum of
// the faces' solid angles in global id order, divided by 4π and rounded
// once to float32) signs a row −1 where it is at least 1/2. A device that
// cannot reproduce the reference's atan2 bit for bit reports its float64
// sum with an error bound (WindingSums); WindingSign decides the rows the
// bound settles and names the others for a host re-check.

// parityDirection is the fixed direction of the crossing counts.
var parityDirection = [3]float32{0.5773, 0.5112, 0.6367}

// ParityDirection returns the fixed direction of the crossing counts,
// (0.5773, 0.5112, 0.6367): off every axis and diagonal, so that segments
// from grid-aligned points rarely graze an axis-aligned mesh's edges.
func ParityDirection() [3]float32 { return parityDirection }

// ParityReach is the largest absolute coordinate of the vertices of the
// faces f (3 global vertex indices each) in vertices (3 per vertex), 0
// without faces; every face lies in the cube [−reach, reach]³.
func ParityReach(vertices []float32, faces []int32) float32 {
	var m float32
	for _, v := range faces {
		for k := range 3 {
			m = max(m, float32(math.Abs(float64(vertices[3*int(v)+k]))))
		}
	}
	return m
}

// ParityLength is the length of the parity segment of a point whose
// largest absolute coordinate is a, in a scene of reach r:
// R = 1 + 4·max(a, r) in float32. Every point of the cube [−r, r]³ is within
// 2·√3·max(a, r) < R − 1 of the point, so the segment ends beyond every
// face whatever the rounding of its end point.
func ParityLength(a, r float32) float32 {
	return 1 + 4*max(a, r)
}

// ParityEnd is the end of the parity segment of p: per component
// p + ParityDirection()·R in float32 (the product rounded first) with R =
// ParityLength(max |p_k|, reach). A non-finite p gives a non-finite end.
func ParityEnd(p [3]float32, reach float32) [3]float32 {
	a := max(float32(math.Abs(float64(p[0]))), float32(math.Abs(float64(p[1]))), float32(math.Abs(float64(p[2]))))
	r := ParityLength(a, reach)
	var e [3]float32
	for k := range 3 {
		e[k] = float32(p[k] + float32(parityDirection[k]*r))
	}
	return e
}

// ParityEnds returns the ends of the parity segments of every row of points
// (3 per row; see ParityEnd).
func ParityEnds(points []float32, reach float32) []float32 {
	e := make([]float32, len(points))
	for i := 0; i+2 < len(points); i += 3 {
		q := ParityEnd([3]float32{points[i], points[i+1], points[i+2]}, reach)
		copy(e[i:i+3], q[:])
	}
	return e
}

// ParitySigns turns the crossing counts of the parity segments into signs:
// −1 for an odd count (inside), +1 for an even one, 0 for an inactive row
// or one with a non-finite coordinate. active is empty or one flag per row.
func ParitySigns(points []float32, active []bool, count []int32) []int8 {
	sign := make([]int8, len(count))
	for i, c := range count {
		if !signedRow(points, active, i) {
			continue
		}
		sign[i] = 1
		if c%2 != 0 {
			sign[i] = -1
		}
	}
	return sign
}

// signedRow reports whether row i is active with finite coordinates.
func signedRow(points []float32, active []bool, i int) bool {
	if len(active) > 0 && !active[i] {
		return false
	}
	return IsFinite3([3]float32{points[3*i], points[3*i+1], points[3*i+2]})
}

// WindingSums is a per-row generalized winding number before its division:
// Sum is the float64 sum of the faces' signed solid angles, Bound an upper
// bound of |Sum − reference sum| (0 where Sum is the reference's own).
// Inactive and non-finite rows hold NaN sums.
type WindingSums struct {
	Sum, Bound []float64
}

// Len is the row count.
func (w *WindingSums) Len() int { return len(w.Sum) }

// WindingFourPi is the divisor of the winding number: 4π in float64.
const WindingFourPi = 4 * math.Pi

// WindingInside is the reference's decision for an exact sum: the winding
// number float32(sum / 4π) is at least 1/2.
func WindingInside(sum float64) bool { return float32(sum/WindingFourPi) >= 0.5 }

// WindingSign decides the sign of a row from its sum and bound: the
// reference sum lies in [sum − bound, sum + bound] and WindingInside is
// monotone in the sum, so when both ends of a slightly widened interval
// decide alike the reference decides the same (certain true): −1 inside,
// +1 outside. A row the bound does not settle returns certain false and
// needs the reference, as does a NaN or negative bound. A NaN sum (inactive
// or non-finite row) is 0, certain. The reference's threshold on the sum is
// 4π·(1/2 − 2^-26) (the float32 rounding of the winding number reaches 1/2
// from there), so only rows within the bound of it stay open.
func WindingSign(sum, bound float64) (sign int8, certain bool) {
	if sum != sum {
		return 0, true
	}
	if !(bound >= 0) { // NaN or negative: no bound
		return 0, false
	}
	lo := math.Nextafter(sum-2*bound, math.Inf(-1))
	hi := math.Nextafter(sum+2*bound, math.Inf(1))
	if bound == 0 {
		lo, hi = sum, sum
	}
	in := WindingInside(lo)
	if in != WindingInside(hi) {
		return 0, false
	}
	if in {
		return -1, true
	}
	return 1, true
}
