package ref

// The point–triangle closest point of the closest-point query, in float64
// from float32 vertices. Every product is rounded by an explicit conversion
// before it is summed, so that no compiler may contract it into an FMA: the
// results are the same on every platform, which the tie rule (equal squared
// distances) relies on.

// pvec is a float64 3-vector of the closest-point routines.
type pvec = [3]float64

func widen(p [3]float32) pvec { return pvec{float64(p[0]), float64(p[1]), float64(p[2])} }

func psub(a, b pvec) pvec { return pvec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

// pdot is a·b with every product rounded before the sum.
func pdot(a, b pvec) float64 {
	return float64(float64(a[0]*b[0])+float64(a[1]*b[1])) + float64(a[2]*b[2])
}

// paxpy is a + k·e, per component with the product rounded first.
func paxpy(a pvec, k float64, e pvec) pvec {
	return pvec{a[0] + float64(k*e[0]), a[1] + float64(k*e[1]), a[2] + float64(k*e[2])}
}

// pdist2 is |p − q|².
func pdist2(p, q pvec) float64 {
	w := psub(p, q)
	return pdot(w, w)
}

// triPoint is the closest point of a triangle to a query point: its
// barycentric weights (of v0, v1, v2), the point and the squared distance.
type triPoint struct {
	bary pvec
	q    pvec
	d2   float64
}

// thinRel is the relative size of |(b−a)×(c−a)|² against |b−a|²·|c−a|²
// at or under which a triangle counts as thin: Ericson's regions assume a
// proper triangle (for a segment or a point they can pick the wrong edge),
// and the interior weights of a sliver are quotients of rounding noise.
const thinRel = 1e-8

// closestOnTriangle is the closest point of triangle (a, b, c) to p. A
// proper triangle is answered by Ericson's Voronoi-region classification
// (ericson). A thin or degenerate one (a sliver, a segment, a point) takes
// the nearest of ericson's answer and the closest points of its edges ab,
// bc, ca, the first among equals; for a degenerate triangle the nearest
// point lies on an edge, so the answer is exact up to rounding. Every
// weight returned is in [0, 1] and the point is their combination, so it
// lies on the triangle up to rounding.
func closestOnTriangle(p, a, b, c pvec) triPoint {
	ab, ac := psub(b, a), psub(c, a)
	n := pvec{float64(ab[1]*ac[2]) - float64(ab[2]*ac[1]), float64(ab[2]*ac[0]) - float64(ab[0]*ac[2]),
		float64(ab[0]*ac[1]) - float64(ab[1]*ac[0])}
	best, ok := ericson(p, a, b, c)
	if ok && pdot(n, n) > thinRel*float64(pdot(ab, ab)*pdot(ac, ac)) {
		return best
	}
	if !ok {
		best.d2 = inf64
	}
	for i, e := range [3][2]pvec{{a, b}, {b, c}, {c, a}} {
		s, q, d2 := pointSegment(p, e[0], e[1])
		if d2 < best.d2 {
			best = triPoint{q: q, d2: d2}
			best.bary[i], best.bary[(i+1)%3] = 1-s, s
		}
	}
	return best
}

// ericson is the closest point of triangle (a, b, c) to p by Ericson's
// Voronoi-region classification (Real-Time Collision Detection, §5.1.5):
// the vertex regions, then the edge regions, then the interior. ok is false
// when the interior weights are undefined (a degenerate triangle, or one
// of them negative by rounding).
func ericson(p, a, b, c pvec) (triPoint, bool) {
	ab, ac, ap := psub(b, a), psub(c, a), psub(p, a)
	d1, d2 := pdot(ab, ap), pdot(ac, ap)
	if d1 <= 0 && d2 <= 0 {
		return triPoint{bary: pvec{1, 0, 0}, q: a, d2: pdist2(p, a)}, true
	}
	bp := psub(p, b)
	d3, d4 := pdot(ab, bp), pdot(ac, bp)
	if d3 >= 0 && d4 <= d3 {
		return triPoint{bary: pvec{0, 1, 0}, q: b, d2: pdist2(p, b)}, true
	}
	vc := float64(d1*d4) - float64(d3*d2)
	if vc <= 0 && d1 >= 0 && d3 <= 0 {
		v := ratio(d1, d1-d3)
		q := paxpy(a, v, ab)
		return triPoint{bary: pvec{1 - v, v, 0}, q: q, d2: pdist2(p, q)}, true
	}
	cp := psub(p, c)
	d5, d6 := pdot(ab, cp), pdot(ac, cp)
	if d6 >= 0 && d5 <= d6 {
		return triPoint{bary: pvec{0, 0, 1}, q: c, d2: pdist2(p, c)}, true
	}
	vb := float64(d5*d2) - float64(d1*d6)
	if vb <= 0 && d2 >= 0 && d6 <= 0 {
		w := ratio(d2, d2-d6)
		q := paxpy(a, w, ac)
		return triPoint{bary: pvec{1 - w, 0, w}, q: q, d2: pdist2(p, q)}, true
	}
	va := float64(d3*d6) - float64(d5*d4)
	if e, f := d4-d3, d5-d6; va <= 0 && e >= 0 && f >= 0 {
		w := ratio(e, e+f)
		q := paxpy(b, w, psub(c, b))
		return triPoint{bary: pvec{0, 1 - w, w}, q: q, d2: pdist2(p, q)}, true
	}
	sum := (va + vb) + vc
	if !(va >= 0 && vb >= 0 && vc >= 0 && sum > 0) {
		return triPoint{}, false
	}
	v, w := vb/sum, vc/sum
	q := paxpy(paxpy(a, v, ab), w, ac)
	return triPoint{bary: pvec{va / sum, v, w}, q: q, d2: pdist2(p, q)}, true
}

// ratio is the edge parameter n/d of an edge region, where the region's
// tests guarantee 0 ≤ n ≤ d; d = 0 (a zero-length edge, or one so short
// that its squared length underflows) gives 0.
func ratio(n, d float64) float64 {
	if !(d > 0) {
		return 0
	}
	return min(max(n/d, 0), 1)
}

// pointSegment is the point of segment a→b nearest to p: its parameter
// s ∈ [0, 1] (0 for a zero-length segment), the point a + s·(b−a) and the
// squared distance.
func pointSegment(p, a, b pvec) (s float64, q pvec, d2 float64) {
	e := psub(b, a)
	if l2 := pdot(e, e); l2 > 0 {
		s = min(max(pdot(psub(p, a), e)/l2, 0), 1)
	}
	q = paxpy(a, s, e)
	return s, q, pdist2(p, q)
}
