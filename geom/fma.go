package geom

import "math"

// FMA32 returns x*y + z computed exactly and rounded once to float32 (round
// to nearest, ties to even), i.e. the result of CUDA's fmaf and of IEEE 754
// fusedMultiplyAdd on binary32.
//
// The product of two float32 values is exact in float64, and the TwoSum
// error of the float64 sum is exact too, so s + err equals x*y + z exactly.
// Rounding s to float32 is then correct unless s lies exactly halfway
// between two float32 values while err is non-zero; in that case the result
// is the neighbour on the side of err. Every step uses explicit conversions
// so that the Go compiler cannot fuse it into a float64 FMA.
func FMA32(x, y, z float32) float32 {
	p := float64(float64(x) * float64(y)) // exact
	zz := float64(z)
	s := float64(p + zz)
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return float32(s)
	}
	// TwoSum (Knuth): err is the exact rounding error of s.
	bb := float64(s - p)
	err := float64(p-float64(s-bb)) + float64(zz-bb)
	const overflow = 0x1p128 // first float64 above every float32 midpoint
	if math.Abs(s) >= overflow {
		return float32(math.Inf(int(math.Copysign(1, s))))
	}
	r := float32(s)
	rf := float64(r)
	if err == 0 || rf == s {
		return r
	}
	// s is not a float32; find its two float32 neighbours lo < s < hi. The
	// neighbour of the overflow range is 2^128 standing for ±Inf.
	lo, hi := rf, rf
	if math.IsInf(rf, 0) {
		rf = math.Copysign(overflow, rf)
		lo, hi = rf, rf
	}
	if rf < s {
		hi = float64(math.Nextafter32(r, float32(math.Inf(1))))
	} else {
		lo = float64(math.Nextafter32(r, float32(math.Inf(-1))))
	}
	if s-lo != hi-s { // not a tie: every value within err of s rounds like s
		return r
	}
	pick := lo
	if err > 0 {
		pick = hi
	}
	if math.Abs(pick) >= overflow {
		return float32(math.Inf(int(math.Copysign(1, pick))))
	}
	return float32(pick)
}

// DiffOfProducts returns a*b − c*d in float32 with Kahan's compensated
// algorithm (error ≤ 1.5 ulp), in exactly this sequence:
//
//	w = c*d            // float32 multiply, rounded
//	e = fmaf(-c, d, w) // exact rounding error of w
//	f = fmaf(a, b, -w)
//	return f + e       // float32 add, rounded
//
// fmaf is FMA32. A CUDA kernel writes __fmul_rn(c, d), fmaf(-c, d, w),
// fmaf(a, b, -w) and __fadd_rn(f, e).
func DiffOfProducts(a, b, c, d float32) float32 {
	w := float32(c * d)
	e := FMA32(-c, d, w)
	f := FMA32(a, b, -w)
	return float32(f + e)
}
