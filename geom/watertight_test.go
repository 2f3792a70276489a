package geom

import (
	"math"
	"math/rand/v2"
	"testing"
)

var (
	unit0 = [3]float32{0, 0, 0}
	unit1 = [3]float32{1, 0, 0}
	unit2 = [3]float32{0, 1, 0}
)

func TestWatertightUnitTriangle(t *testing.T) {
	tt, u, v, ok := Watertight([3]float32{.25, .25, -1}, [3]float32{0, 0, 1}, unit0, unit1, unit2, TMin, DefaultTMax)
	if !ok || tt != 1 || u != .25 || v != .25 {
		t.Fatalf("got t=%g u=%g v=%g ok=%v, want 1 .25 .25 true", tt, u, v, ok)
	}
	// Either side, either winding, unnormalized direction.
	tt, u, v, ok = Watertight([3]float32{.5, .25, 2}, [3]float32{0, 0, -4}, unit0, unit2, unit1, TMin, DefaultTMax)
	if !ok || tt != .5 || u != .25 || v != .5 {
		t.Fatalf("back side: got t=%g u=%g v=%g ok=%v", tt, u, v, ok)
	}
}

func TestWatertightRejects(t *testing.T) {
	o := [3]float32{.25, .25, -1}
	d := [3]float32{0, 0, 1}
	nan := float32(math.NaN())
	cases := []struct {
		name       string
		o, d       [3]float32
		p0, p1, p2 [3]float32
		tmin, tmax float32
	}{
		{"outside", [3]float32{.75, .75, -1}, d, unit0, unit1, unit2, TMin, DefaultTMax},
		{"behind", [3]float32{.25, .25, 1}, d, unit0, unit1, unit2, TMin, DefaultTMax},
		{"beyond tmax", o, d, unit0, unit1, unit2, TMin, math.Nextafter32(1, 0)},
		{"below tmin", o, d, unit0, unit1, unit2, math.Nextafter32(1, 2), DefaultTMax},
		{"degenerate point", o, d, unit0, unit0, unit0, TMin, DefaultTMax},
		{"degenerate line", o, d, unit0, unit1, [3]float32{2, 0, 0}, TMin, DefaultTMax},
		{"parallel in plane", [3]float32{-1, .25, 0}, [3]float32{1, 0, 0}, unit0, unit1, unit2, TMin, DefaultTMax},
		{"parallel off plane", [3]float32{-1, .25, 1}, [3]float32{1, 0, 0}, unit0, unit1, unit2, TMin, DefaultTMax},
		{"zero direction", o, [3]float32{}, unit0, unit1, unit2, -1, DefaultTMax},
		{"nan origin", [3]float32{nan, .25, -1}, d, unit0, unit1, unit2, TMin, DefaultTMax},
		{"nan direction", o, [3]float32{0, nan, 1}, unit0, unit1, unit2, TMin, DefaultTMax},
		{"nan tmax", o, d, unit0, unit1, unit2, TMin, nan},
	}
	for _, c := range cases {
		if tt, _, _, ok := Watertight(c.o, c.d, c.p0, c.p1, c.p2, c.tmin, c.tmax); ok {
			t.Errorf("%s: unexpected hit at t=%g", c.name, tt)
		}
	}
}

func TestWatertightInclusiveInterval(t *testing.T) {
	o := [3]float32{.25, .25, -1}
	d := [3]float32{0, 0, 1}
	if _, _, _, ok := Watertight(o, d, unit0, unit1, unit2, 1, 1); !ok {
		t.Fatal("t == tmin == tmax must be accepted")
	}
}

func TestWatertightEdgesAndVertices(t *testing.T) {
	// A 2×2 grid of quads over [0,2]², each split along its diagonal: rays
	// exactly through the interior vertex, interior edges and diagonals hit
	// at least one of the eight triangles. Dyadic values keep o + d exact.
	var tris [][3][3]float32
	for i := range 2 {
		for j := range 2 {
			x, y := float32(j), float32(i)
			a := [3]float32{x, y, 0}
			b := [3]float32{x + 1, y, 0}
			c := [3]float32{x, y + 1, 0}
			d := [3]float32{x + 1, y + 1, 0}
			tris = append(tris, [3][3]float32{a, b, c}, [3][3]float32{b, d, c})
		}
	}
	points := [][2]float32{{1, 1}, {1, .5}, {.5, 1}, {1.5, 1}, {1, 1.75}, {.5, .5}, {1.25, .75}, {1.5, 1.5}}
	dirs := [][3]float32{{0, 0, 1}, {.25, -.125, 1}, {-0x1p-10, 0x1p-9, 1}, {0, 0, -1}, {.5, .5, .5}, {1, 0, .125}}
	for _, p := range points {
		for _, d := range dirs {
			o := [3]float32{p[0] - d[0], p[1] - d[1], -d[2]}
			hits := 0
			for _, tri := range tris {
				if tt, _, _, ok := Watertight(o, d, tri[0], tri[1], tri[2], TMin, DefaultTMax); ok {
					hits++
					if tt != 1 {
						t.Errorf("ray through (%g,%g) d=%v: t=%g, want 1", p[0], p[1], d, tt)
					}
				}
			}
			if hits == 0 {
				t.Errorf("ray through (%g,%g) with d=%v leaks through the grid", p[0], p[1], d)
			}
		}
	}
}

// TestWatertightClosedTetrahedron shoots random rays from inside a closed
// tetrahedron: every ray must leave through some face, so the union of the
// four tests must never miss.
func TestWatertightClosedTetrahedron(t *testing.T) {
	r := newRand(t)
	v := [4][3]float32{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	faces := [4][3]int{{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}
	for i := range 20000 {
		// A random interior point (barycentric), sometimes aimed at an edge or vertex.
		w := [4]float64{r.Float64(), r.Float64(), r.Float64(), r.Float64()}
		s := w[0] + w[1] + w[2] + w[3]
		var o [3]float32
		for k := range 3 {
			o[k] = float32((w[1]*float64(v[1][k]) + w[2]*float64(v[2][k]) + w[3]*float64(v[3][k])) / s)
		}
		var d [3]float32
		if i%2 == 0 {
			target := v[r.IntN(4)]
			if i%4 == 0 { // the midpoint of an edge
				other := v[r.IntN(4)]
				for k := range 3 {
					target[k] = (target[k] + other[k]) / 2
				}
			}
			d = [3]float32{target[0] - o[0], target[1] - o[1], target[2] - o[2]}
		} else {
			d = [3]float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())}
		}
		if d == [3]float32{} {
			continue
		}
		hit := false
		for _, f := range faces {
			if _, _, _, ok := Watertight(o, d, v[f[0]], v[f[1]], v[f[2]], 0, DefaultTMax); ok {
				hit = true
			}
		}
		if !hit {
			t.Fatalf("ray o=%v d=%v escaped the tetrahedron", o, d)
		}
	}
}

// mollerTrumbore64 is an independent float64 reference.
func mollerTrumbore64(o, d, p0, p1, p2 [3]float32) (t, u, v float64, ok bool) {
	var O, D, A, B, C [3]float64
	for k := range 3 {
		O[k], D[k] = float64(o[k]), float64(d[k])
		A[k], B[k], C[k] = float64(p0[k]), float64(p1[k]), float64(p2[k])
	}
	e1 := [3]float64{B[0] - A[0], B[1] - A[1], B[2] - A[2]}
	e2 := [3]float64{C[0] - A[0], C[1] - A[1], C[2] - A[2]}
	cross := func(a, b [3]float64) [3]float64 {
		return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
	}
	dot := func(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
	p := cross(D, e2)
	det := dot(e1, p)
	if det == 0 {
		return 0, 0, 0, false
	}
	s := [3]float64{O[0] - A[0], O[1] - A[1], O[2] - A[2]}
	u = dot(s, p) / det
	q := cross(s, e1)
	v = dot(D, q) / det
	t = dot(e2, q) / det
	return t, u, v, u >= 0 && v >= 0 && u+v <= 1
}

func TestWatertightAgainstFloat64(t *testing.T) {
	r := newRand(t)
	rv := func() [3]float32 {
		return [3]float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())}
	}
	checked := 0
	for range 100000 {
		o, d, p0, p1, p2 := rv(), rv(), rv(), rv(), rv()
		tw, uw, vw, okw := Watertight(o, d, p0, p1, p2, -DefaultTMax, DefaultTMax)
		tr, ur, vr, okr := mollerTrumbore64(o, d, p0, p1, p2)
		margin := math.Min(math.Min(ur, vr), 1-ur-vr)
		if math.Abs(margin) < 1e-4 {
			continue // too close to an edge for two algorithms to agree
		}
		if okw != okr {
			t.Fatalf("o=%v d=%v tri=%v %v %v: watertight %v, float64 %v (margin %g)", o, d, p0, p1, p2, okw, okr, margin)
		}
		if !okw {
			continue
		}
		checked++
		scale := 1 + math.Abs(tr)
		if math.Abs(float64(tw)-tr) > 1e-3*scale || math.Abs(float64(uw)-ur) > 1e-3 || math.Abs(float64(vw)-vr) > 1e-3 {
			t.Fatalf("o=%v d=%v: watertight (%g,%g,%g), float64 (%g,%g,%g)", o, d, tw, uw, vw, tr, ur, vr)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d hits compared", checked)
	}
}

// TestWatertightAxisPermutation: the same geometry expressed with permuted
// axes gives the same answer, for every dominant axis and direction sign.
func TestWatertightAxisPermutation(t *testing.T) {
	r := newRand(t)
	perm := func(v [3]float32, p [3]int) [3]float32 { return [3]float32{v[p[0]], v[p[1]], v[p[2]]} }
	perms := [][3]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}}
	for range 20000 {
		o := [3]float32{float32(r.Float64()), float32(r.Float64()), -1}
		d := [3]float32{float32(r.NormFloat64() * .1), float32(r.NormFloat64() * .1), 1}
		if r.IntN(2) == 0 {
			o[2], d[2] = 1, -1
		}
		t0, u0, v0, ok0 := Watertight(o, d, unit0, unit1, unit2, TMin, DefaultTMax)
		for _, p := range perms[1:] {
			t1, u1, v1, ok1 := Watertight(perm(o, p), perm(d, p), perm(unit0, p), perm(unit1, p), perm(unit2, p), TMin, DefaultTMax)
			if ok0 != ok1 || t0 != t1 || u0 != u1 || v0 != v1 {
				t.Fatalf("o=%v d=%v perm %v: (%v %g %g %g) vs (%v %g %g %g)", o, d, p, ok0, t0, u0, v0, ok1, t1, u1, v1)
			}
		}
	}
}

var benchSink float32

func BenchmarkWatertight(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	o := [3]float32{float32(r.Float64()), float32(r.Float64()), -1}
	d := [3]float32{0.01, 0.02, 1}
	for b.Loop() {
		tt, _, _, _ := Watertight(o, d, unit0, unit1, unit2, TMin, DefaultTMax)
		benchSink += tt
	}
}
