package geom

import "math"

// Rsqrt is the reciprocal square root 1/sqrt(x) used for normals: computed
// in float64 and rounded once to float32, so it is within one ulp of the
// exact value. CUDA's rsqrtf carries up to 2 ulp of error, so normals
// derived from it agree with these to a few ulp, not bit for bit.
func Rsqrt(x float32) float32 {
	return float32(1 / math.Sqrt(float64(x)))
}

// FaceNormal is the unit face normal normalize(e1×e2) of the triangle
// (p0, p1, p2), e1 = p1−p0, e2 = p2−p0, scaled by Rsqrt(max(|e1×e2|², floor)).
// A degenerate triangle yields the zero vector. Sequence (f32, no
// contraction): e1, e2 per component; n = (e1y*e2z − e1z*e2y,
// e1z*e2x − e1x*e2z, e1x*e2y − e1y*e2x) with each product rounded;
// l2 = (nx*nx + ny*ny) + nz*nz; s = Rsqrt(max(l2, floor)); n*s.
// intersect uses floor = NormalFloor, trace_reflections ReflectionNormalFloor.
func FaceNormal(p0, p1, p2 [3]float32, floor float32) [3]float32 {
	n := FaceCross(p0, p1, p2)
	l2 := float32(float32(float32(n[0]*n[0])+float32(n[1]*n[1])) + float32(n[2]*n[2]))
	s := Rsqrt(max(l2, floor))
	return [3]float32{float32(n[0] * s), float32(n[1] * s), float32(n[2] * s)}
}

// FaceCross is the unnormalised face normal e1×e2 of FaceNormal, in its
// operation order.
func FaceCross(p0, p1, p2 [3]float32) [3]float32 {
	e1 := sub3(p1, p0)
	e2 := sub3(p2, p0)
	return [3]float32{
		float32(float32(e1[1]*e2[2]) - float32(e1[2]*e2[1])),
		float32(float32(e1[2]*e2[0]) - float32(e1[0]*e2[2])),
		float32(float32(e1[0]*e2[1]) - float32(e1[1]*e2[0])),
	}
}

// Interpolate is the barycentric point p0 + u·(p1−p0) + v·(p2−p0), per
// component as (p0 + u*e1) + v*e2 in f32 with each product rounded.
func Interpolate(p0, p1, p2 [3]float32, u, v float32) [3]float32 {
	e1 := sub3(p1, p0)
	e2 := sub3(p2, p0)
	var p [3]float32
	for k := range 3 {
		p[k] = float32(float32(p0[k]+float32(u*e1[k])) + float32(v*e2[k]))
	}
	return p
}

func sub3(a, b [3]float32) [3]float32 {
	return [3]float32{float32(a[0] - b[0]), float32(a[1] - b[1]), float32(a[2] - b[2])}
}
