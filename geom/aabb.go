package geom

import "math"

// Reciprocal returns the reciprocal direction of the slab test (spec §8.2):
// 1/d[k] per axis, or ±ReciprocalLarge when |d[k]| < ReciprocalFloor, with
// the sign of d[k] (copysignf semantics: −0 gives −1e20).
func Reciprocal(d [3]float32) [3]float32 {
	var r [3]float32
	for k, x := range d {
		if abs32(x) < ReciprocalFloor {
			r[k] = float32(math.Copysign(float64(ReciprocalLarge), float64(x)))
		} else {
			r[k] = float32(1 / x)
		}
	}
	return r
}

// RayAABB is the float32 slab test of the CUDA traverser (spec §8.2) for the
// ray o + t·d, given invD = Reciprocal(d), against the box [lo, hi]:
//
//	t0[k] = (lo[k]−o[k])*invD[k];  t1[k] = (hi[k]−o[k])*invD[k]   (f32 sub, then f32 mul)
//	tNear = Fmaxf(Fmaxf(Fmaxf(Fminf(t0x,t1x), Fminf(t0y,t1y)), Fminf(t0z,t1z)), tmin)
//	tFar  = Fminf(Fminf(Fminf(Fmaxf(t0x,t1x), Fmaxf(t0y,t1y)), Fmaxf(t0z,t1z)), tcap)
//	hit   = tNear <= tFar
//
// fminf/fmaxf follow C99: when one operand is NaN the other is returned.
// The test is not conservative under rounding; the CPU reference in package
// ref uses its own padded float64 test for culling.
func RayAABB(o, invD, lo, hi [3]float32, tmin, tcap float32) (tNear, tFar float32, hit bool) {
	var mins, maxs [3]float32
	for k := range 3 {
		t0 := float32(float32(lo[k]-o[k]) * invD[k])
		t1 := float32(float32(hi[k]-o[k]) * invD[k])
		mins[k] = Fminf(t0, t1)
		maxs[k] = Fmaxf(t0, t1)
	}
	tNear = Fmaxf(Fmaxf(Fmaxf(mins[0], mins[1]), mins[2]), tmin)
	tFar = Fminf(Fminf(Fminf(maxs[0], maxs[1]), maxs[2]), tcap)
	return tNear, tFar, tNear <= tFar
}

// Fminf is C99 fminf (the device's fminf): the smaller operand, the other
// one if either is NaN.
func Fminf(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case b < a:
		return b
	}
	return a
}

// Fmaxf is C99 fmaxf: the larger operand, the other one if either is NaN.
func Fmaxf(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case b > a:
		return b
	}
	return a
}
