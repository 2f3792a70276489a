package edge

import (
	"math"

	"github.com/rayd-go/rayd/geom"
)

// distFloor is the floor under the squared distance before the square root
// of the backward pass (spec §5.7).
const distFloor = 1e-20

// PointCotangent holds the upstream gradients of a PointResult. Each slice
// is nil (zero) or has one value per row (EdgePoint: 3 per row).
type PointCotangent struct {
	Distance  []float64
	EdgePoint []float64
	EdgeT     []float64
}

// RayCotangent holds the upstream gradients of a RayResult. Each slice is
// nil (zero) or has one value per row (Point and EdgePoint: 3 per row).
type RayCotangent struct {
	Distance  []float64
	RayT      []float64
	Point     []float64
	EdgeT     []float64
	EdgePoint []float64
}

// NearestPointVJP is the backward pass of NearestPoint (spec §5.7) with the
// edge of every row frozen to r.GlobalEdgeID. The edge parameter s is
// recomputed in float64 from p and the frozen edge; it moves with the inputs
// only when 0 < s < 1 and is frozen when clamped. It returns the gradient
// with respect to the query points (3 per row) and the gradient with respect
// to the scene vertices, scattered into 3 values per global vertex. Rows
// that missed contribute nothing.
func (s *Scene) NearestPointVJP(p []float32, r *PointResult, g PointCotangent) (dp, dv []float64, err error) {
	if err := s.check(); err != nil {
		return nil, nil, err
	}
	n, err := rows3("p", p)
	if err != nil {
		return nil, nil, err
	}
	if err := checkResult(r.Len(), len(r.GlobalEdgeID), n); err != nil {
		return nil, nil, err
	}
	for _, c := range []struct {
		name string
		got  int
		per  int
	}{{"distance", len(g.Distance), 1}, {"edge_point", len(g.EdgePoint), 3}, {"edge_t", len(g.EdgeT), 1}} {
		if err := checkLen(c.name, c.got, n, c.per, true); err != nil {
			return nil, nil, err
		}
	}
	dp = make([]float64, 3*n)
	dv = make([]float64, 3*s.Tables.NumVertices())
	for i := range n {
		id := r.GlobalEdgeID[i]
		if id < 0 || int(id) >= s.Edges.Len() {
			continue
		}
		pi, _ := load3(p, i)
		a, b := s.endpoints(int(id))
		gp, ga, gb := pointVJP(pi, a, b, row1(g.Distance, i), row3(g.EdgePoint, i), row1(g.EdgeT, i))
		put3(dp, int32(i), gp)
		put3(dv, s.Edges.V0[id], ga)
		put3(dv, s.Edges.V1[id], gb)
	}
	return dp, dv, nil
}

// NearestRayVJP is the backward pass of NearestRay (spec §5.7) with the edge
// of every row frozen to r.GlobalEdgeID. The ray parameter t and edge
// parameter s are recomputed in float64 from the inputs and the frozen edge;
// a parameter strictly inside its range (0 < t < tmax, with tmax +Inf for a
// half ray, and 0 < s < 1) moves with the inputs through the stationarity
// conditions of the distance, a clamped one is frozen. It returns the
// gradients with respect to o and d (3 per row) and the vertex gradient
// (3 per global vertex). tmax receives no gradient; rows that missed
// contribute nothing.
func (s *Scene) NearestRayVJP(o, d, tmax []float32, r *RayResult, g RayCotangent) (do, dd, dv []float64, err error) {
	if err := s.check(); err != nil {
		return nil, nil, nil, err
	}
	n, err := geom.CheckRays(o, d, tmax, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkResult(r.Len(), len(r.GlobalEdgeID), n); err != nil {
		return nil, nil, nil, err
	}
	for _, c := range []struct {
		name string
		got  int
		per  int
	}{{"distance", len(g.Distance), 1}, {"ray_t", len(g.RayT), 1}, {"point", len(g.Point), 3},
		{"edge_t", len(g.EdgeT), 1}, {"edge_point", len(g.EdgePoint), 3}} {
		if err := checkLen(c.name, c.got, n, c.per, true); err != nil {
			return nil, nil, nil, err
		}
	}
	do = make([]float64, 3*n)
	dd = make([]float64, 3*n)
	dv = make([]float64, 3*s.Tables.NumVertices())
	for i := range n {
		id := r.GlobalEdgeID[i]
		if id < 0 || int(id) >= s.Edges.Len() {
			continue
		}
		oi, ok1 := load3(o, i)
		di, ok2 := load3(d, i)
		T, ok3 := rayLimit(tmax, i)
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		a, b := s.endpoints(int(id))
		c := rayCot{dist: row1(g.Distance, i), t: row1(g.RayT, i), point: row3(g.Point, i),
			s: row1(g.EdgeT, i), edgePoint: row3(g.EdgePoint, i)}
		gro, grd, ga, gb := rayVJP(oi, di, T, a, b, c)
		put3(do, int32(i), gro)
		put3(dd, int32(i), grd)
		put3(dv, s.Edges.V0[id], ga)
		put3(dv, s.Edges.V1[id], gb)
	}
	return do, dd, dv, nil
}

func checkResult(rows, ids, n int) error {
	if rows != n || ids != n {
		return &geom.LengthError{Field: "result", Want: n, Got: min(rows, ids), PerRow: 1}
	}
	return nil
}

func row1(v []float64, i int) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[i]
}

func row3(v []float64, i int) vec {
	if len(v) == 0 {
		return vec{}
	}
	return vec{v[3*i], v[3*i+1], v[3*i+2]}
}

func put3(dst []float64, i int32, v vec) {
	dst[3*i] += v[0]
	dst[3*i+1] += v[1]
	dst[3*i+2] += v[2]
}

// pointVJP is the point backward of spec §5.7 for the query p and the edge
// a→b, given the cotangents of the distance, the edge point and edge_t.
func pointVJP(p, a, b vec, gDist float64, gQ vec, gT float64) (gp, ga, gb vec) {
	s, q, d2 := pointSegment(p, a, b)
	dvec := sub(p, q)
	dist := math.Sqrt(max(d2, distFloor))
	gSep := scale(dvec, gDist/dist)
	gq := sub(gQ, gSep)
	gp = gSep
	ga = scale(gq, 1-s)
	gb = scale(gq, s)
	if s > 0 && s < 1 {
		e := sub(b, a)
		mu := dot(gq, e) + gT
		den := max(dot(e, e), distFloor)
		pa := sub(p, a)
		num := dot(pa, e)
		gp = axpy(mu/den, e, gp)
		ds := sub(scale(pa, 1/den), scale(e, 2*num/(den*den))) // ∂s/∂b
		ga = sub(ga, add(scale(e, mu/den), scale(ds, mu)))
		gb = axpy(mu, ds, gb)
	}
	return gp, ga, gb
}

// rayCot is the per-row cotangent of a ray query.
type rayCot struct {
	dist, t, s       float64
	point, edgePoint vec
}

// rayVJP is the ray backward: the transpose of the JVP of the closest pair
// (t, s) of o + t·d and a + s·(b−a) and of the outputs built from it. Free
// parameters obey the stationarity conditions F_t = w·d = 0 and
// F_s = w·e = 0 with w = o + t·d − a − s·e; their sensitivities follow by
// the implicit function theorem, λ = −J⁻ᵀ x̄, θ̄ += (∂F/∂θ)ᵀ λ.
func rayVJP(o, d vec, tmax float64, a, b vec, c rayCot) (gro, grd, ga, gb vec) {
	t, s, d2 := raySegment(o, d, tmax, a, b)
	e := sub(b, a)
	w := sub(axpy(t, d, o), axpy(s, e, a))
	dist := math.Sqrt(max(d2, distFloor))
	gw := scale(w, c.dist/dist)

	// Direct partials with t and s held.
	gP := add(gw, c.point)
	gQ := sub(c.edgePoint, gw)
	gro = gP
	grd = scale(gP, t)
	ga = scale(gQ, 1-s)
	gb = scale(gQ, s)
	tBar := c.t + dot(d, gP)
	sBar := c.s + dot(e, gQ)

	tFree := t > 0 && t < tmax
	sFree := s > 0 && s < 1
	dd, de, ee := dot(d, d), dot(d, e), dot(e, e)
	var lt, ls float64 // multipliers of F_t and F_s
	switch {
	case tFree && sFree:
		// J = [[dd, −de], [de, −ee]] (rows F_t, F_s; columns t, s).
		// Solve Jᵀ λ = −x̄: dd·lt + de·ls = −tBar, −de·lt − ee·ls = −sBar.
		det := -dd*ee + de*de
		if math.Abs(det) <= distFloor {
			return gro, grd, ga, gb
		}
		lt = (-tBar*(-ee) - de*(-sBar)) / det
		ls = (dd*(-sBar) - (-de)*(-tBar)) / det
	case tFree:
		if dd <= distFloor {
			return gro, grd, ga, gb
		}
		lt = -tBar / dd
	case sFree:
		if ee <= distFloor {
			return gro, grd, ga, gb
		}
		ls = sBar / ee
	default:
		return gro, grd, ga, gb
	}
	// ∂F_t: o → d, d → w + t·d, a → −(1−s)·d, b → −s·d.
	// ∂F_s: o → e, d → t·e, a → −(1−s)·e − w, b → −s·e + w.
	gro = add(gro, add(scale(d, lt), scale(e, ls)))
	grd = add(grd, add(scale(axpy(t, d, w), lt), scale(e, t*ls)))
	ga = add(ga, add(scale(d, -(1-s)*lt), scale(axpy(1-s, e, w), -ls)))
	gb = add(gb, add(scale(d, -s*lt), scale(sub(w, scale(e, s)), ls)))
	return gro, grd, ga, gb
}
