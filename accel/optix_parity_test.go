package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// The tie rule of backend parity. OptiX's triangle test is not
// geom.Watertight, so an OptiX record equals the reference only up to it:
// the same face except near ties, t within parityRelT relative and
// barycentrics within parityBary — widened by the float32 conditioning of
// the hit (faceTol: a small face far from the origin, or a grazing ray, is
// decided less precisely by any float32 test). A row whose answers differ
// (another face, or a hit against a miss) is accepted only when the
// difference is explained: both hit at the same t (an exact tie: shared
// edges, vertices, duplicate faces), or the hit one side reports and the
// other lacks lies on a triangle edge (a barycentric weight within the
// barycentric tolerance of 0) or at a bound of the ray interval. A face a
// backend reports must really be hit at its t.
const (
	parityRelT = 1e-5
	parityAbsT = 1e-6 // floor of the t tolerance (t near tmin)
	parityBary = 1e-4
	parityNorm = 1e-6 // normals of the same face come from the same code
	// parityUlps is how many float32 roundings of the ray's distance scale
	// two triangle tests may differ by.
	parityUlps = 16.0 / (1 << 24)
)

// parityScene is the reference side of a parity check. tmin and mask are
// the rows' optional per-ray limits (empty: the defaults); the face masks
// are those of tb (sc reloaded after every change).
type parityScene struct {
	tb   *geom.Tables
	sc   *ref.Scene
	tmin []float32
	mask []uint8
}

// tminAt is row i's tmin, def without per-row tmin.
func (ps *parityScene) tminAt(i int, def float32) float32 {
	return geom.RayLimits{TMin: ps.tmin}.TMinAt(i, def)
}

// maskAt is row i's ray mask.
func (ps *parityScene) maskAt(i int) uint8 { return geom.RayLimits{Mask: ps.mask}.MaskAt(i) }

// seen checks that a backend's hit of row i may be seen by the row: its
// face's mesh mask shares a bit with the row's mask.
func (ps *parityScene) seen(i int, h rowHit) error {
	if !h.hit || h.prim < 0 || int(h.prim) >= ps.tb.NumFaces() {
		return nil
	}
	if m := ps.tb.MaskOf(int(ps.tb.FaceShape[h.prim])); m&ps.maskAt(i) == 0 {
		return fmt.Errorf("face %d (mesh mask %#x) hit by a row of mask %#x", h.prim, m, ps.maskAt(i))
	}
	return nil
}

// parityStats counts how rows compared.
type parityStats struct {
	Rows, Hits, Ties, EdgeCases int
}

func (s *parityStats) add(o parityStats) {
	s.Rows, s.Hits, s.Ties, s.EdgeCases = s.Rows+o.Rows, s.Hits+o.Hits, s.Ties+o.Ties, s.EdgeCases+o.EdgeCases
}

func (s parityStats) String() string {
	return fmt.Sprintf("%d rows, %d hits, %d exact ties, %d edge/bound cases", s.Rows, s.Hits, s.Ties, s.EdgeCases)
}

// tolT is the plain t tolerance (same traversal, different record fields).
func tolT(t float64) float64 { return parityRelT*math.Abs(t) + parityAbsT }

// faceTol is how far two correct float32 triangle tests may disagree about
// a hit of face f by the ray (o, d) at t, when the ray origin itself is
// known only to within slack (later bounces of a reflection chain).
type faceTol struct {
	t, bary, point float64
}

func (ps *parityScene) faceTol(o, d [3]float32, f int32, t, slack float64) faceTol {
	p := [3][3]float32{}
	p[0], p[1], p[2] = ps.tb.Triangle(int(f))
	var dist float64 // distance scale of the test: vertices relative to the origin
	for _, v := range p {
		for k := range 3 {
			dist = max(dist, math.Abs(float64(v[k])-float64(o[k])))
		}
	}
	var e [3][3]float64
	maxEdge := 0.0
	for i := range 3 {
		j := (i + 1) % 3
		for k := range 3 {
			e[i][k] = float64(p[j][k]) - float64(p[i][k])
		}
		maxEdge = max(maxEdge, math.Sqrt(dot64(e[i], e[i])))
	}
	dv := [3]float64{float64(d[0]), float64(d[1]), float64(d[2])}
	n := cross64(e[0], [3]float64{-e[2][0], -e[2][1], -e[2][2]}) // (p1−p0)×(p2−p0)
	nd, nl := math.Abs(dot64(n, dv)), math.Sqrt(dot64(n, n))
	if nd == 0 || nl == 0 || math.IsNaN(nd) {
		inf := math.Inf(1)
		return faceTol{inf, inf, inf}
	}
	cond := parityUlps*dist + slack
	ft := faceTol{
		t:    parityRelT*math.Abs(t) + parityAbsT + cond*nl/nd,      // cond / (|d|·|cos|)
		bary: parityBary + cond*maxEdge*math.Sqrt(dot64(dv, dv))/nd, // cond·edge / (2·area·|cos|)
	}
	ft.point = ft.bary * maxEdge
	return ft
}

// mt64 intersects the line o + t·d with face f in float64 (Möller–Trumbore
// without bounds) and returns t and the minimum barycentric weight (< 0:
// outside the triangle). ok is false for a degenerate face or a ray parallel
// to its plane.
func (ps *parityScene) mt64(o, d [3]float32, f int32) (t, minBary float64, ok bool) {
	p0, p1, p2 := ps.tb.Triangle(int(f))
	var e1, e2, tv, dv [3]float64
	for k := range 3 {
		e1[k] = float64(p1[k]) - float64(p0[k])
		e2[k] = float64(p2[k]) - float64(p0[k])
		tv[k] = float64(o[k]) - float64(p0[k])
		dv[k] = float64(d[k])
	}
	pv := cross64(dv, e2)
	det := dot64(e1, pv)
	if math.Abs(det) < 1e-300 || math.IsNaN(det) {
		return 0, 0, false
	}
	inv := 1 / det
	u := dot64(tv, pv) * inv
	qv := cross64(tv, e1)
	v := dot64(dv, qv) * inv
	t = dot64(e2, qv) * inv
	return t, min(1-u-v, u, v), true
}

func cross64(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func dot64(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// rowHit is one answer to a closest-hit query.
type rowHit struct {
	hit  bool
	t    float32
	prim int32
}

// consistent applies the tie rule to one ray's reference answer want and
// backend answer got (slack: uncertainty of the ray origin). tie reports an
// exact tie, edge an edge/bound case that explained a difference.
func (ps *parityScene) consistent(o, d [3]float32, tmin, tmax float32, slack float64, want, got rowHit) (tie, edge bool, err error) {
	if got.hit && (got.prim < 0 || int(got.prim) >= ps.tb.NumFaces()) {
		return false, false, fmt.Errorf("face id %d out of range", got.prim)
	}
	ftol := func(h rowHit) faceTol { return ps.faceTol(o, d, h.prim, float64(h.t), slack) }
	switch {
	case !want.hit && !got.hit:
		return false, false, nil
	case want.hit && got.hit && want.prim == got.prim:
		if tol := ftol(want).t; math.Abs(float64(got.t)-float64(want.t)) > tol {
			return false, false, fmt.Errorf("same face %d, t %v vs reference %v (tolerance %.3g)", got.prim, got.t, want.t, tol)
		}
		return false, false, nil
	}
	if got.hit {
		gt, gb, ok := ps.mt64(o, d, got.prim)
		ft := ftol(got)
		if !ok || math.Abs(gt-float64(got.t)) > ft.t || gb < -ft.bary {
			return false, false, fmt.Errorf("reported face %d is not hit at t %v (float64: t %v, min barycentric %v, ok %v; tolerances %+v)",
				got.prim, got.t, gt, gb, ok, ft)
		}
	}
	onEdge := func(h rowHit) bool { return ps.edgeOrBound(o, d, tmin, tmax, slack, h) }
	switch {
	case want.hit && got.hit && math.Abs(float64(got.t)-float64(want.t)) <= max(ftol(want).t, ftol(got).t):
		return true, false, nil
	case want.hit && got.hit && got.t < want.t:
		if onEdge(got) {
			return false, true, nil
		}
		return false, false, fmt.Errorf("face %d at t %v is nearer than the reference's face %d at %v and not on an edge",
			got.prim, got.t, want.prim, want.t)
	case want.hit:
		if onEdge(want) {
			return false, true, nil
		}
		return false, false, fmt.Errorf("reference face %d at t %v missed (got hit %v face %d t %v) and not on an edge",
			want.prim, want.t, got.hit, got.prim, got.t)
	default:
		if onEdge(got) {
			return false, true, nil
		}
		return false, false, fmt.Errorf("face %d at t %v where the reference misses, not on an edge", got.prim, got.t)
	}
}

// edgeOrBound reports whether hit h of the ray lies on an edge of its face
// or at a bound of [tmin, tmax], where two correct triangle tests may
// disagree.
func (ps *parityScene) edgeOrBound(o, d [3]float32, tmin, tmax float32, slack float64, h rowHit) bool {
	ft := ps.faceTol(o, d, h.prim, float64(h.t), slack)
	if math.Abs(float64(h.t)-float64(tmin)) <= ft.t || math.Abs(float64(h.t)-float64(tmax)) <= ft.t {
		return true
	}
	_, b, ok := ps.mt64(o, d, h.prim)
	return ok && b <= ft.bary
}

func row3f(v []float32, i int) [3]float32 { return [3]float32{v[3*i], v[3*i+1], v[3*i+2]} }

// within reports |a−b| ≤ tol per component over n components from i·n.
func within(a, b []float32, i, n int, tol func(k int) float64) bool {
	for k := range n {
		if math.Abs(float64(a[i*n+k])-float64(b[i*n+k])) > tol(k) {
			return false
		}
	}
	return true
}

// checkHits compares a FlagsAll intersect record got with the reference
// record want for rays (o, d, tmax, active) under the tie rule.
func (ps *parityScene) checkHits(o, d, tmax []float32, active []bool, got, want *geom.Hits) (parityStats, error) {
	st := parityStats{Rows: want.Len()}
	for i := range want.Len() {
		wh := rowHit{want.PrimID[i] >= 0, want.T[i], want.PrimID[i]}
		gh := rowHit{got.PrimID[i] >= 0, got.T[i], got.PrimID[i]}
		oi, di := row3f(o, i), row3f(d, i)
		tm := geom.DefaultTMax
		if tmax != nil {
			tm = tmax[i]
		}
		if !wh.hit && (len(active) > 0 && !active[i] || !geom.IsFinite3(oi) || !geom.IsFinite3(di)) && gh.hit {
			return st, fmt.Errorf("row %d: inactive or non-finite row hit face %d", i, gh.prim)
		}
		if err := ps.seen(i, gh); err != nil {
			return st, fmt.Errorf("row %d: %w", i, err)
		}
		tie, edge, err := ps.consistent(oi, di, ps.tminAt(i, geom.TMin), tm, 0, wh, gh)
		if err != nil {
			return st, fmt.Errorf("row %d (o %v d %v tmax %v): %w", i, oi, di, tm, err)
		}
		if gh.hit {
			st.Hits++
		}
		if tie {
			st.Ties++
		}
		if edge {
			st.EdgeCases++
		}
		if err := ps.checkRecordRow(i, oi, di, got, want, wh.prim == gh.prim && wh.hit == gh.hit); err != nil {
			return st, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return st, nil
}

// checkRecordRow checks the derived fields of row i of got: against want
// when both name the same face (samePrim), else for consistency with got's
// own face (or for the exact miss record).
func (ps *parityScene) checkRecordRow(i int, o, d [3]float32, got, want *geom.Hits, samePrim bool) error {
	prim := got.PrimID[i]
	if prim < 0 {
		for _, v := range [][]float32{got.P[3*i : 3*i+3], got.N[3*i : 3*i+3], got.GeoN[3*i : 3*i+3], got.Bary[3*i : 3*i+3], got.UV[2*i : 2*i+2]} {
			for _, x := range v {
				if x != 0 {
					return fmt.Errorf("miss record has non-zero vectors")
				}
			}
		}
		if !math.IsInf(float64(got.T[i]), 1) || got.ShapeID[i] != -1 || got.LocalPrimID[i] != -1 || got.GlobalPrimID[i] != -1 {
			return fmt.Errorf("miss record: t %v ids %d %d %d", got.T[i], got.ShapeID[i], got.LocalPrimID[i], got.GlobalPrimID[i])
		}
		return nil
	}
	if int(prim) >= ps.tb.NumFaces() {
		return fmt.Errorf("face id %d out of range", prim)
	}
	if got.GlobalPrimID[i] != prim || got.ShapeID[i] != ps.tb.FaceShape[prim] || got.LocalPrimID[i] != ps.tb.FaceLocal[prim] {
		return fmt.Errorf("ids (shape %d, prim %d, local %d, global %d) inconsistent with face %d", got.ShapeID[i], prim,
			got.LocalPrimID[i], got.GlobalPrimID[i], prim)
	}
	p0, p1, p2 := ps.tb.Triangle(int(prim))
	nrm := geom.FaceNormal(p0, p1, p2, geom.NormalFloor)
	nTol := func(int) float64 { return parityNorm }
	if !within(got.GeoN[3*i:3*i+3], nrm[:], 0, 3, nTol) {
		return fmt.Errorf("geo_n %v, face normal %v", got.GeoN[3*i:3*i+3], nrm)
	}
	if !within(got.N[3*i:3*i+3], nrm[:], 0, 3, nTol) {
		return fmt.Errorf("n %v, face normal %v", got.N[3*i:3*i+3], nrm)
	}
	t := float64(got.T[i])
	pTol := func(k int) float64 {
		return parityRelT*(math.Abs(float64(o[k]))+math.Abs(t*float64(d[k]))) + parityAbsT
	}
	var p [3]float32
	for k := range 3 {
		p[k] = float32(float64(o[k]) + t*float64(d[k]))
	}
	if !within(got.P[3*i:3*i+3], p[:], 0, 3, pTol) {
		return fmt.Errorf("p %v, o + t·d = %v", got.P[3*i:3*i+3], p)
	}
	b := got.Bary[3*i : 3*i+3]
	if got.UV[2*i] != b[1] || got.UV[2*i+1] != b[2] || math.Abs(float64(b[0]+b[1]+b[2])-1) > parityBary {
		return fmt.Errorf("uv %v and barycentric %v disagree", got.UV[2*i:2*i+2], b)
	}
	if samePrim {
		ft := ps.faceTol(o, d, prim, t, 0)
		bTol := func(int) float64 { return ft.bary }
		if !within(got.Bary, want.Bary, i, 3, bTol) || !within(got.UV, want.UV, i, 2, bTol) {
			return fmt.Errorf("barycentric %v / uv %v, reference %v / %v", b, got.UV[2*i:2*i+2], want.Bary[3*i:3*i+3], want.UV[2*i:2*i+2])
		}
	}
	return nil
}
