package edge

import "math"

// vec is a float64 3-vector.
type vec [3]float64

func add(a, b vec) vec             { return vec{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func sub(a, b vec) vec             { return vec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func scale(a vec, k float64) vec   { return vec{a[0] * k, a[1] * k, a[2] * k} }
func dot(a, b vec) float64         { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func axpy(k float64, x, y vec) vec { return add(y, scale(x, k)) }

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// pointSegment is the point–segment closest point of spec §5.1: the
// parameter s ∈ [0,1] of the point of segment a→b nearest to p (0 for a
// degenerate segment), that point q and the squared distance |p−q|².
func pointSegment(p, a, b vec) (s float64, q vec, d2 float64) {
	e := sub(b, a)
	if l2 := dot(e, e); l2 > DistanceEpsilon {
		s = clamp01(dot(sub(p, a), e) / l2)
	}
	q = axpy(s, e, a)
	w := sub(p, q)
	return s, q, dot(w, w)
}

// raySegment is the closest pair between the query o + t·d, t ∈ [0, tmax]
// (tmax = +Inf for a half ray), and the edge a + s·(b−a), s ∈ [0,1]
// (spec §5.2, CUDA backend). It returns t, s and the squared distance.
// Among equal candidates the first in the order below wins.
//
// Finite tmax: the query is the segment o→o+tmax·d with parameter u = t/tmax
// and the candidates are o, the query end, a and b each against the other
// segment, then the interior solution.
// Half ray: the origin against the edge, a and b projected on the ray
// (parameter clamped at 0), then the interior solution with t ≥ 0.
func raySegment(o, d vec, tmax float64, a, b vec) (t, s, d2 float64) {
	e := sub(b, a)
	best := math.Inf(1)
	try := func(tc, sc float64) {
		w := sub(axpy(tc, d, o), axpy(sc, e, a))
		if dd := dot(w, w); dd < best {
			best, t, s = dd, tc, sc
		}
	}
	if !math.IsInf(tmax, 1) {
		D := scale(d, tmax)
		end := add(o, D)
		s0, _, _ := pointSegment(o, a, b)
		try(0, s0)
		s1, _, _ := pointSegment(end, a, b)
		try(tmax, s1)
		ua, _, _ := pointSegment(a, o, end)
		try(ua*tmax, 0)
		ub, _, _ := pointSegment(b, o, end)
		try(ub*tmax, 1)
		if u, v, ok := interior(o, D, a, e); ok && u >= 0 && u <= 1 && v >= 0 && v <= 1 {
			try(u*tmax, v)
		}
		return t, s, best
	}
	s0, _, _ := pointSegment(o, a, b)
	try(0, s0)
	dd := dot(d, d)
	for i, x := range [2]vec{a, b} {
		tp := 0.0
		if dd > DistanceEpsilon {
			tp = max(dot(sub(x, o), d)/dd, 0)
		}
		try(tp, float64(i))
	}
	if u, v, ok := interior(o, d, a, e); ok && u >= 0 && v >= 0 && v <= 1 {
		try(u, v)
	}
	return t, s, best
}

// interior solves the unconstrained closest pair of the lines o + u·D and
// a + v·e; ok is false when |D|², |e|² or |det| is not above
// DistanceEpsilon.
func interior(o, D, a, e vec) (u, v float64, ok bool) {
	A, B, C := dot(D, D), dot(D, e), dot(e, e)
	w := sub(o, a)
	dw, ew := dot(D, w), dot(e, w)
	det := A*C - B*B
	if A <= DistanceEpsilon || C <= DistanceEpsilon || math.Abs(det) <= DistanceEpsilon {
		return 0, 0, false
	}
	return (B*ew - C*dw) / det, (A*ew - B*dw) / det, true
}
