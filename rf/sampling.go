package rf

import "math"

// kellerHit samples the Keller cone of an edge point (spec §6.2): the
// outgoing direction k̂ keeps the incident axial cosine a = î·ê, î =
// normalize(Q − src), and turns by φ about the edge:
//
//	r = √(1−a²); b0 = stablePerp(ê, î); b1 = normalize(ê × b0)
//	k̂ = normalize(a ê + r (cos φ b0 + sin φ b1))
//
// It hits the grid plane from Q along k̂ (|k̂_axis| > 1e-6, t > 1e-4,
// finite), returns the hit T, its cell (it must lie inside the grid) and the
// measure m = 2π·|u_t × u_φ| / max(cell_area, 1e-6), the Jacobian of the map
// (edge parameter, φ) → plane point, with u_t = ê − (ê_axis/k̂_axis) k̂ and
// u_φ = t (dk̂/dφ − ((dk̂/dφ)_axis/k̂_axis) k̂), dk̂/dφ = r(−sin φ b0 + cos φ b1).
func kellerHit(g gridView, q, e, src vec3, phi float64) (vec3, int, float64, bool) {
	inc := q.sub(src).normalize()
	a := math.Min(math.Max(inc.dot(e), -1), 1)
	r := math.Sqrt(math.Max(1-a*a, 0))
	b0 := stablePerp(e, inc)
	b1 := e.cross(b0).normalize()
	sn, cs := math.Sincos(phi)
	k := e.scale(a).add(b0.scale(cs).add(b1.scale(sn)).scale(r)).normalize()
	den := k[g.axis]
	if math.Abs(den) <= epsSmall {
		return vec3{}, 0, 0, false
	}
	t := (g.pos - q[g.axis]) / den
	if !(t > dfrBias) || !finite(t) {
		return vec3{}, 0, 0, false
	}
	target := q.add(k.scale(t))
	dk := b0.scale(-sn).add(b1.scale(cs)).scale(r)
	ut := e.sub(k.scale(e[g.axis] / den))
	uphi := dk.sub(k.scale(dk[g.axis] / den)).scale(t)
	m := 2 * math.Pi * ut.cross(uphi).norm() / math.Max(g.area, epsSmall)
	if !finite(m) {
		return vec3{}, 0, 0, false
	}
	cell, ok := g.cellOf(target)
	return target, cell, m, ok
}

// suffixFace picks the reflecting face of a suffix lane among the valid
// candidates {prim0, prim1 ≠ prim0} (valid: a scene face with a valid
// material row): slot SuffixHash(g, seed) mod count, slot 0 being prim0 when
// it is valid. It returns the face and the candidate count.
func suffixFace(tr tracer, mv matView, prim0, prim1 int32, g, seed uint32) (int32, float64, bool) {
	ok := func(p int32) bool { return p >= 0 && int(p) < tr.faces() && mv.valid(p) }
	v0 := ok(prim0)
	v1 := ok(prim1) && prim1 != prim0
	n := 0
	if v0 {
		n++
	}
	if v1 {
		n++
	}
	if n == 0 {
		return -1, 0, false
	}
	slot := SuffixHash(g, seed) % uint32(n)
	if v0 && slot == 0 {
		return prim0, float64(n), true
	}
	return prim1, float64(n), true
}

// suffixPoint connects the edge point Q to the target T by one specular
// reflection on face f: Q is mirrored in the face plane, the segment
// image→T is intersected with the triangle (Möller–Trumbore, |a| > 1e-7,
// barycentric slack 1e-5, t ∈ (1e-4, dist − 1e-4)), and the connection must
// be specular (reflected·outgoing > 1 − 1e-3).
func suffixPoint(tr tracer, f int32, q, t vec3) (vec3, bool) {
	p0, e1, e2, n := tr.triangle(f)
	if !(n.dot(n) > 0) {
		return vec3{}, false
	}
	img := q.sub(n.scale(2 * q.sub(p0).dot(n)))
	delta := t.sub(img)
	dist := delta.norm()
	if !(dist > dfrBias) || !finite(dist) {
		return vec3{}, false
	}
	dir := delta.scale(1 / dist)
	h := dir.cross(e2)
	a := e1.dot(h)
	if math.Abs(a) <= 1e-7 {
		return vec3{}, false
	}
	fa := 1 / a
	s := img.sub(p0)
	u := fa * s.dot(h)
	if u < -1e-5 || u > 1+1e-5 {
		return vec3{}, false
	}
	qv := s.cross(e1)
	v := fa * dir.dot(qv)
	if v < -1e-5 || u+v > 1+1e-5 {
		return vec3{}, false
	}
	tt := fa * e2.dot(qv)
	if !(tt > dfrBias) || !(tt < dist-dfrBias) || !finite(tt) {
		return vec3{}, false
	}
	r := img.add(dir.scale(tt))
	in, out := r.sub(q), t.sub(r)
	li, lo := in.norm(), out.norm()
	if !(li > epsSmall) || !(lo > epsSmall) {
		return vec3{}, false
	}
	ih := in.scale(1 / li)
	on := n
	if ih.dot(n) > 0 {
		on = n.neg()
	}
	refl := ih.sub(on.scale(2 * ih.dot(on)))
	if refl.dot(out.scale(1/lo)) <= 1-1e-3 {
		return vec3{}, false
	}
	return r, true
}
