package ref

import (
	"math"

	"github.com/rayd-go/rayd/geom"
)

// DetFloor is the magnitude below which the determinant of the hit system
// M = [−d | e1 | e2] is replaced by ±DetFloor (sign kept, 0 ⇒ +) in the
// intersect VJP.
const DetFloor = 1e-12

// IntersectCotangents are the upstream gradients of intersect's outputs
// (geom.IntersectCotangents).
type IntersectCotangents = geom.IntersectCotangents

// IntersectGrads is the result of IntersectVJP: the gradient with respect
// to every scene-global vertex (3 per vertex, mesh order; split per mesh
// with geom.Tables.VertexOffset) and to every ray's origin and direction
// (3 per row). ∂L/∂tmax is zero and not reported.
type IntersectGrads struct {
	Vertices, Origins, Directions []float64
}

// IntersectVJP is the frozen-winner vector–Jacobian product of intersect
// (spec §2.2), in float64. The tape is the forward's winner per row: prim
// (global face id, −1 for a miss) and uv (the barycentric weights (u, v)
// of v1 and v2, 2 per row; nil: recomputed by solving the hit system).
// Rows that are inactive, missed, or name a face outside the scene
// contribute nothing (their ray gradients are 0). Gradients are taken at
// the current vertices of t, not re-traced.
//
// Per row, with M = [−d | e1 | e2] (columns) and b = (1−u−v, u, v):
// gy = (ḡt + ḡp·d, ḡuv.x − ḡb.x + ḡb.y, ḡuv.y − ḡb.x + ḡb.z), λ = M⁻ᵀ·gy
// (Cramer, det floored at DetFloor), t* = (M⁻¹(o − v0)).x; then ∂o += ḡp + λ,
// ∂d += t*·(λ + ḡp), ∂v_k −= b_k·λ, and the unit-normal term with
// q = (ḡN − (n̂·ḡN)n̂)/L (ḡN = ḡn + ḡgeo_n, L = sqrt(max(|e1×e2|², 1e-20))):
// ∂v1 += e2×q, ∂v2 += q×e1, ∂v0 −= e2×q + q×e1.
//
// Errors: a *LengthError (ErrLength) for a slice of the wrong length.
func IntersectVJP(t *geom.Tables, o, d []float32, active []bool, prim []int32, uv []float32, g IntersectCotangents) (*IntersectGrads, error) {
	n, err := geom.CheckRays(o, d, nil, active)
	if err != nil {
		return nil, err
	}
	if len(prim) != n {
		return nil, &LengthError{Field: "prim", Got: len(prim), Want: n, PerRow: 1}
	}
	if uv != nil && len(uv) != 2*n {
		return nil, &LengthError{Field: "uv", Got: len(uv), Want: 2 * n, PerRow: 2}
	}
	if err := g.Check(n); err != nil {
		return nil, err
	}
	res := &IntersectGrads{Vertices: make([]float64, len(t.Vertices)), Origins: make([]float64, 3*n), Directions: make([]float64, 3*n)}
	nf := int32(t.NumFaces())
	for i := range n {
		p := prim[i]
		if (len(active) > 0 && !active[i]) || p < 0 || p >= nf {
			continue
		}
		var r vjpRow
		r.o, r.d = vec64(o, i), vec64(d, i)
		var idx [3]int
		for k := range 3 {
			idx[k] = int(t.Faces[3*int(p)+k])
			r.v[k] = vec64(t.Vertices, idx[k])
		}
		if uv != nil {
			r.u, r.w, r.haveUV = float64(uv[2*i]), float64(uv[2*i+1]), true
		}
		r.cot = rowCotangent(g, i)
		dv, do, dd := r.grad()
		for k := range 3 {
			for c := range 3 {
				res.Vertices[3*idx[k]+c] += dv[k][c]
			}
		}
		copy(res.Origins[3*i:], do[:])
		copy(res.Directions[3*i:], dd[:])
	}
	return res, nil
}

// rowCot is one row's cotangents in float64.
type rowCot struct {
	t            float64
	p, n, geoN   [3]float64
	uv           [2]float64
	bary         [3]float64
	hasN, hasGeo bool
}

func rowCotangent(g IntersectCotangents, i int) rowCot {
	var c rowCot
	if g.T != nil {
		c.t = float64(g.T[i])
	}
	if g.P != nil {
		c.p = vec64(g.P, i)
	}
	if g.N != nil {
		c.n, c.hasN = vec64(g.N, i), true
	}
	if g.GeoN != nil {
		c.geoN, c.hasGeo = vec64(g.GeoN, i), true
	}
	if g.UV != nil {
		c.uv = [2]float64{float64(g.UV[2*i]), float64(g.UV[2*i+1])}
	}
	if g.Bary != nil {
		c.bary = vec64(g.Bary, i)
	}
	return c
}

// vjpRow is one hit row: the ray, the winner's vertices, the tape's (u, v).
type vjpRow struct {
	o, d   [3]float64
	v      [3][3]float64
	u, w   float64 // tape barycentrics of v1 and v2
	haveUV bool
	cot    rowCot
}

// grad returns the row's gradients with respect to v0..v2, o and d.
func (r *vjpRow) grad() (dv [3][3]float64, do, dd [3]float64) {
	e1, e2 := sub64(r.v[1], r.v[0]), sub64(r.v[2], r.v[0])
	a := [3]float64{-r.d[0], -r.d[1], -r.d[2]}
	bc, ca, ab := cross64(e1, e2), cross64(e2, a), cross64(a, e1)
	det := dot64(a, bc)
	if math.Abs(det) < DetFloor {
		if det < 0 {
			det = -DetFloor
		} else {
			det = DetFloor // 0 (either sign) ⇒ +
		}
	}
	rhs := sub64(r.o, r.v[0])
	// M⁻¹·rhs by Cramer: t* = rhs·(e1×e2)/det, u = a·(rhs×e2)/det, v = a·(e1×rhs)/det.
	ts := dot64(rhs, bc) / det
	u, w := r.u, r.w
	if !r.haveUV {
		u, w = dot64(a, cross64(rhs, e2))/det, dot64(a, cross64(e1, rhs))/det
	}
	b := [3]float64{1 - u - w, u, w}
	c := r.cot
	gy := [3]float64{c.t + dot64(c.p, r.d), c.uv[0] - c.bary[0] + c.bary[1], c.uv[1] - c.bary[0] + c.bary[2]}
	var lam [3]float64 // M⁻ᵀ·gy: the rows of M⁻¹ are (e1×e2, e2×a, a×e1)/det
	for k := range 3 {
		lam[k] = (gy[0]*bc[k] + gy[1]*ca[k] + gy[2]*ab[k]) / det
	}
	for k := range 3 {
		do[k] = c.p[k] + lam[k]
		dd[k] = ts * (lam[k] + c.p[k])
		for j := range 3 {
			dv[j][k] = -b[j] * lam[k]
		}
	}
	if c.hasN || c.hasGeo {
		gN := add64(c.n, c.geoN)
		l := math.Sqrt(math.Max(dot64(bc, bc), float64(geom.NormalFloor)))
		nh := [3]float64{bc[0] / l, bc[1] / l, bc[2] / l}
		s := dot64(nh, gN)
		q := [3]float64{(gN[0] - s*nh[0]) / l, (gN[1] - s*nh[1]) / l, (gN[2] - s*nh[2]) / l}
		g1, g2 := cross64(e2, q), cross64(q, e1)
		for k := range 3 {
			dv[1][k] += g1[k]
			dv[2][k] += g2[k]
			dv[0][k] -= g1[k] + g2[k]
		}
	}
	return dv, do, dd
}

func vec64(v []float32, i int) [3]float64 {
	return [3]float64{float64(v[3*i]), float64(v[3*i+1]), float64(v[3*i+2])}
}

func sub64(a, b [3]float64) [3]float64 { return [3]float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

func add64(a, b [3]float64) [3]float64 { return [3]float64{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

func dot64(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func cross64(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
