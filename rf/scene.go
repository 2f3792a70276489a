package rf

import (
	"math"

	"github.com/rayd-go/rayd/geom"
)

// Hit is a closest hit: ray parameter T, barycentric weights U (of v1) and V
// (of v2) and the global face Prim.
type Hit struct {
	T, U, V float32
	Prim    int32
}

// Scene is the geometry the operations trace against. Rays are float32, as on
// the device; every decision is the caller's triangle test (the reference
// scene of package ref uses geom.Watertight, ties broken by the lowest prim).
// *TablesScene implements it; the reference scene of package ref fits behind
// a small adapter (its AnyHit has this signature, its Closest returns a
// ref.Hit with the same four fields). A nil Scene is empty space: nothing
// occludes and there are no faces.
type Scene interface {
	// NumFaces is the number of global faces F.
	NumFaces() int
	// Triangle returns the vertices of global face f in [0, F).
	Triangle(f int) (p0, p1, p2 [3]float32)
	// AnyHit reports whether o + t·d hits a face with t ∈ [tmin, tmax].
	AnyHit(o, d [3]float32, tmin, tmax float32) bool
	// ClosestHit returns the closest hit with t ∈ [tmin, tmax]: smallest t,
	// ties broken by the lowest prim.
	ClosestHit(o, d [3]float32, tmin, tmax float32) (Hit, bool)
}

// TablesScene is a brute-force Scene over geom.Tables: every query tests
// every face with geom.Watertight and keeps the smallest t, ties broken by
// the lowest prim id, so it answers exactly as the reference scene of
// package ref. It reads the tables on every query; it is meant for small
// test scenes.
type TablesScene struct {
	tables *geom.Tables
}

// NewTablesScene wraps t (which must not be nil).
func NewTablesScene(t *geom.Tables) *TablesScene { return &TablesScene{tables: t} }

// NumFaces implements Scene.
func (s *TablesScene) NumFaces() int { return s.tables.NumFaces() }

// Triangle implements Scene.
func (s *TablesScene) Triangle(f int) (p0, p1, p2 [3]float32) { return s.tables.Triangle(f) }

// AnyHit implements Scene.
func (s *TablesScene) AnyHit(o, d [3]float32, tmin, tmax float32) bool {
	for f := range s.tables.NumFaces() {
		p0, p1, p2 := s.tables.Triangle(f)
		if _, _, _, ok := geom.Watertight(o, d, p0, p1, p2, tmin, tmax); ok {
			return true
		}
	}
	return false
}

// ClosestHit implements Scene.
func (s *TablesScene) ClosestHit(o, d [3]float32, tmin, tmax float32) (Hit, bool) {
	best := Hit{T: tmax, Prim: geom.InvalidID}
	for f := range s.tables.NumFaces() {
		p0, p1, p2 := s.tables.Triangle(f)
		t, u, v, ok := geom.Watertight(o, d, p0, p1, p2, tmin, best.T)
		if ok && (best.Prim < 0 || t < best.T) {
			best = Hit{T: t, U: u, V: v, Prim: int32(f)}
		}
	}
	return best, best.Prim >= 0
}

// tracer wraps a possibly nil Scene with the visibility rules of the
// diffraction and reflection kernels, in float64 with float32 rays.
type tracer struct{ s Scene }

func (tr tracer) faces() int {
	if tr.s == nil {
		return 0
	}
	return tr.s.NumFaces()
}

// triangle returns the vertices of face f and its unit normal
// normalize(e1×e2) in float64 (zero for a degenerate face).
func (tr tracer) triangle(f int32) (p0, e1, e2, n vec3) {
	a, b, c := tr.s.Triangle(int(f))
	p0 = vec3{float64(a[0]), float64(a[1]), float64(a[2])}
	e1 = vec3{float64(b[0]), float64(b[1]), float64(b[2])}.sub(p0)
	e2 = vec3{float64(c[0]), float64(c[1]), float64(c[2])}.sub(p0)
	n = e1.cross(e2)
	if n.dot(n) > 0 {
		n = n.scale(1 / n.norm())
	}
	return p0, e1, e2, n
}

// segment is the biased diffraction segment of spec §6.1: from a + 1e-4·dir
// over [1e-5, max(L − 2e-4, 0)], with skip set when L ≤ 1e-5 or the interval
// is empty (then the segment counts as visible).
func segment(a, b vec3) (o, d [3]float32, tmax float32, skip bool) {
	delta := b.sub(a)
	L := delta.norm()
	if L <= visMinLength {
		return o, d, 0, true
	}
	dir := delta.scale(1 / L)
	tm := math.Max(L-2*dfrBias, 0)
	if !(tm > traceTMin) {
		return o, d, 0, true
	}
	return a.add(dir.scale(dfrBias)).f32(), dir.f32(), float32(tm), false
}

// visible is vis(A, B): nothing blocks the biased segment. Non-finite
// endpoints find no hit and are visible.
func (tr tracer) visible(a, b vec3) bool {
	if tr.s == nil {
		return true
	}
	o, d, tmax, skip := segment(a, b)
	if skip {
		return true
	}
	return !tr.s.AnyHit(o, d, traceTMin, tmax)
}

// visibleIgnoring is the suffix-lane visibility: the biased segment is
// visible when it hits nothing or when its closest blocker is face ignore.
func (tr tracer) visibleIgnoring(a, b vec3, ignore int32) bool {
	if tr.s == nil {
		return true
	}
	o, d, tmax, skip := segment(a, b)
	if skip {
		return true
	}
	h, ok := tr.s.ClosestHit(o, d, traceTMin, tmax)
	return !ok || h.Prim == ignore
}

// closest traces o + t·d (d unit) over [1e-5, tmax] in float32.
func (tr tracer) closest(o, d vec3, tmax float64) (Hit, bool) {
	if tr.s == nil {
		return Hit{}, false
	}
	return tr.s.ClosestHit(o.f32(), d.f32(), traceTMin, float32(tmax))
}
