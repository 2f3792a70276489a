package ref

import (
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

var unitTriangle = geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}

func TestIntersectUnitTriangle(t *testing.T) {
	for _, s := range both(t, unitTriangle) {
		h, err := s.Intersect([]float32{.25, .25, -1}, []float32{0, 0, 1}, nil, nil, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		if h.T[0] != 1 || !equalBits(h.P, []float32{.25, .25, 0}) || !equalBits(h.N, []float32{0, 0, 1}) ||
			!equalBits(h.GeoN, []float32{0, 0, 1}) || !equalBits(h.UV, []float32{.25, .25}) ||
			!equalBits(h.Bary, []float32{.5, .25, .25}) {
			t.Fatalf("hit record %+v", *h)
		}
		if h.ShapeID[0] != 0 || h.PrimID[0] != 0 || h.LocalPrimID[0] != 0 || h.GlobalPrimID[0] != 0 || !h.Valid(0) {
			t.Fatalf("ids %+v", *h)
		}
	}
}

// both returns a BVH and a brute-force scene over the meshes.
func both(t *testing.T, meshes ...geom.Mesh) []*Scene {
	a, b := scenes(t, meshes...)
	return []*Scene{a, b}
}

func TestIntersectFlags(t *testing.T) {
	r := newRand(t)
	for _, s := range both(t, sphereMesh([3]float32{}, 1, 16, 8), gridMesh(6, 3, .5)) {
		o, d, _ := randomRays(r, s.Tables(), 500)
		all, err := s.Intersect(o, d, nil, nil, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		for f := geom.FlagsNone; f <= geom.FlagsAll; f++ {
			h, err := s.Intersect(o, d, nil, nil, f)
			if err != nil {
				t.Fatal(err)
			}
			want := geom.NewHits(len(o)/3, f)
			copy(want.T, all.T)
			if f.Has(geom.FlagGeometric) {
				want.P, want.GeoN, want.Bary = all.P, all.GeoN, all.Bary
				want.ShapeID, want.PrimID, want.LocalPrimID, want.GlobalPrimID = all.ShapeID, all.PrimID, all.LocalPrimID, all.GlobalPrimID
			}
			if f.Has(geom.FlagShadingN) {
				want.N = all.N
			}
			if f.Has(geom.FlagUV) {
				want.UV = all.UV
			}
			if !sameHits(h, want) {
				t.Fatalf("flags %v: record differs from the All record", f)
			}
		}
		// Internal consistency of the All record.
		for i := range all.Len() {
			if !all.Valid(i) {
				continue
			}
			p := all.PrimID[i]
			tb := s.Tables()
			if all.GlobalPrimID[i] != p || tb.FaceOffset[all.ShapeID[i]]+all.LocalPrimID[i] != p {
				t.Fatalf("row %d: ids %d %d %d %d", i, all.ShapeID[i], p, all.LocalPrimID[i], all.GlobalPrimID[i])
			}
			p0, p1, p2 := tb.Triangle(int(p))
			u, v := all.UV[2*i], all.UV[2*i+1]
			if u < 0 || v < 0 || u+v > 1.0001 || all.Bary[3*i+1] != u || all.Bary[3*i+2] != v {
				t.Fatalf("row %d: barycentrics %g %g", i, u, v)
			}
			q := geom.Interpolate(p0, p1, p2, u, v)
			for k := range 3 {
				if math.Abs(float64(q[k]-all.P[3*i+k])) > 1e-4 {
					t.Fatalf("row %d: p %v vs interpolated %v", i, all.P[3*i:3*i+3], q)
				}
				if all.N[3*i+k] != all.GeoN[3*i+k] {
					t.Fatalf("row %d: n != geo_n", i)
				}
			}
			if all.T[i] < geom.TMin {
				t.Fatalf("row %d: t %g below tmin", i, all.T[i])
			}
		}
	}
}

func TestIntersectMisses(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	o := []float32{
		.25, .25, -1, // 0 inactive
		.25, .25, -1, // 1 tmax below the hit
		.25, .25, -1, // 2 tmax exactly at the hit: accepted
		nan, .25, -1, // 3 NaN origin
		.25, .25, -1, // 4 infinite direction
		.25, .25, -1, // 5 zero direction
		.25, .25, -1, // 6 NaN tmax
		2, 2, -1, // 7 outside
		.25, .25, -1, // 8 hit
	}
	d := []float32{0, 0, 1, 0, 0, 1, 0, 0, 2, 0, 0, 1, 0, inf, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1}
	tmax := []float32{inf, .99, .5, inf, inf, inf, nan, inf, inf}
	active := []bool{false, true, true, true, true, true, true, true, true}
	for _, s := range both(t, unitTriangle) {
		h, err := s.Intersect(o, d, tmax, active, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		miss := geom.NewHits(1, geom.FlagsAll)
		for i := range 9 {
			hit := i == 2 || i == 8
			if h.Valid(i) != hit {
				t.Errorf("row %d: valid %v, want %v", i, h.Valid(i), hit)
			}
			if hit {
				continue
			}
			if !math.IsInf(float64(h.T[i]), 1) || h.ShapeID[i] != -1 || h.PrimID[i] != -1 ||
				h.LocalPrimID[i] != -1 || h.GlobalPrimID[i] != -1 ||
				!equalBits(h.P[3*i:3*i+3], miss.P) || !equalBits(h.N[3*i:3*i+3], miss.N) ||
				!equalBits(h.GeoN[3*i:3*i+3], miss.GeoN) || !equalBits(h.Bary[3*i:3*i+3], miss.Bary) ||
				!equalBits(h.UV[2*i:2*i+2], miss.UV) {
				t.Errorf("row %d is not the miss record", i)
			}
		}
		if h.T[2] != .5 {
			t.Errorf("row 2: t = %g, want .5", h.T[2])
		}
	}
}

func TestIntersectDegenerateNeverHit(t *testing.T) {
	m := geom.Mesh{
		Vertices: []float32{0, 0, 0, 1, 0, 0, 2, 0, 0, .5, 0, 0},
		Faces:    []int32{0, 1, 2, 0, 0, 0, 1, 1, 3, 0, 2, 3},
	}
	r := newRand(t)
	for _, s := range both(t, m) {
		o := make([]float32, 0, 3000)
		d := make([]float32, 0, 3000)
		for range 1000 {
			x := float32(r.Float64()*3 - .5)
			o = append(o, x, -1, float32(r.NormFloat64()*1e-3))
			d = append(d, float32(r.NormFloat64()*1e-2), 1, float32(r.NormFloat64()*1e-3))
		}
		o = append(o, .5, 0, -1, 0, 0, 0)
		d = append(d, 0, 0, 1, 1, 0, 0)
		h, err := s.Intersect(o, d, nil, nil, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		for i := range h.Len() {
			if h.Valid(i) {
				t.Fatalf("row %d hit degenerate prim %d", i, h.PrimID[i])
			}
			for _, x := range append(append([]float32{}, h.N...), h.P...) {
				if x != x {
					t.Fatal("a miss produced NaN")
				}
			}
		}
	}
}

// TestGridSharedEdgesAndVertices shoots rays exactly through every vertex,
// edge midpoint and diagonal midpoint of a grid: each must hit (the test is
// watertight) at exactly t = 1, and BVH and brute force agree on the winner.
func TestGridSharedEdgesAndVertices(t *testing.T) {
	const cells = 8
	fast, slow := scenes(t, workloadGrid(cells))
	var o, d []float32
	dirs := [][3]float32{{0, 0, 1}, {0, 0, -1}, {.25, -.125, 1}, {-0x1p-8, 0x1p-7, -.5}, {1, 1, 1}}
	for i := 0; i <= 2*cells; i++ {
		for j := 0; j <= 2*cells; j++ {
			// Points on the grid lines and the cell diagonals, span 2 so that the
			// coordinates are dyadic: x = -1 + j/cells.
			x, y := -1+float32(j)/cells, -1+float32(i)/cells
			if x < -1 || x > 1 || y < -1 || y > 1 {
				continue
			}
			for _, dd := range dirs {
				o = append(o, x-dd[0], y-dd[1], -dd[2])
				d = append(d, dd[:]...)
			}
		}
	}
	a, err := fast.Intersect(o, d, nil, nil, geom.FlagsAll)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := slow.Intersect(o, d, nil, nil, geom.FlagsAll)
	if !sameHits(a, b) {
		t.Fatal("BVH and brute force disagree on shared edges")
	}
	for i := range a.Len() {
		x, y := o[3*i]+d[3*i], o[3*i+1]+d[3*i+1]
		interior := x > -1 && x < 1 && y > -1 && y < 1
		if interior && (!a.Valid(i) || a.T[i] != 1) {
			t.Errorf("ray through (%g,%g) d=%v: valid %v t=%g", x, y, d[3*i:3*i+3], a.Valid(i), a.T[i])
		}
	}
}

// workloadGrid is the benchmark grid with span 2 (dyadic coordinates for
// power-of-two cell counts).
func workloadGrid(cells int) geom.Mesh { return gridMesh(cells, 2, 0) }

func TestClosedMeshesDoNotLeak(t *testing.T) {
	r := newRand(t)
	center := [3]float32{.1, -.2, .3}
	for _, m := range []geom.Mesh{sphereMesh(center, .7, 20, 10), boxMesh(center, [3]float32{.3, .5, .7})} {
		for _, s := range both(t, m) {
			var o, d []float32
			tb := s.Tables()
			for range 2000 {
				var di [3]float32
				if r.IntN(2) == 0 { // at a vertex
					vi := r.IntN(tb.NumVertices())
					for k := range 3 {
						di[k] = tb.Vertices[3*vi+k] - center[k]
					}
				} else {
					for k := range 3 {
						di[k] = float32(r.NormFloat64())
					}
				}
				o = append(o, center[:]...)
				d = append(d, di[:]...)
			}
			h, err := s.Intersect(o, d, nil, nil, geom.FlagsNone)
			if err != nil {
				t.Fatal(err)
			}
			for i := range h.Len() {
				if !h.Valid(i) {
					t.Fatalf("ray d=%v escaped the closed mesh", d[3*i:3*i+3])
				}
			}
		}
	}
}

func TestSelfIntersectionSkipped(t *testing.T) {
	lower, upper := gridMesh(4, 2, 0), gridMesh(4, 2, 1)
	for _, s := range both(t, lower, upper) {
		// Rays start exactly on the lower grid: the t=0 self hit is below tmin,
		// so the upper grid (mesh 1) is reported.
		o := []float32{.3, .2, 0, 0, 0, 0, -.5, .5, 0}
		d := []float32{0, 0, 1, .1, .1, 1, 0, 0, 2}
		h, err := s.Intersect(o, d, nil, nil, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []float32{1, 1, .5} {
			if h.T[i] != want || h.ShapeID[i] != 1 {
				t.Errorf("row %d: t=%g shape %d, want t=%g on mesh 1", i, h.T[i], h.ShapeID[i], want)
			}
		}
	}
}

func TestTieLowestPrimWins(t *testing.T) {
	// The same quad in three meshes: every hit ties in t, the lowest global
	// prim (mesh 0) wins.
	q := gridMesh(1, 2, 0)
	r := newRand(t)
	for _, s := range both(t, q, q, q) {
		var o, d []float32
		for range 200 {
			o = append(o, float32(r.Float64()*1.8-.9), float32(r.Float64()*1.8-.9), -1)
			d = append(d, float32(r.NormFloat64()*.1), float32(r.NormFloat64()*.1), 1)
		}
		h, err := s.Intersect(o, d, nil, nil, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		for i := range h.Len() {
			if h.Valid(i) && h.ShapeID[i] != 0 {
				t.Fatalf("row %d: tie won by mesh %d prim %d", i, h.ShapeID[i], h.PrimID[i])
			}
		}
	}
}

func TestRefitAfterUpdate(t *testing.T) {
	moving := gridMesh(4, 2, 1)
	moving.Dynamic = true
	tb, err := geom.BuildTables([]geom.Mesh{gridMesh(4, 2, 0), moving})
	if err != nil {
		t.Fatal(err)
	}
	fast, _ := NewScene(tb)
	slow, _ := NewScene(tb, BruteForce())
	o := []float32{.1, .1, 5, .7, -.3, 5}
	d := []float32{0, 0, -1, 0, 0, -1}
	h, _ := fast.Intersect(o, d, nil, nil, geom.FlagsAll)
	if h.T[0] != 4 || h.ShapeID[0] != 1 {
		t.Fatalf("before update: t=%g shape %d", h.T[0], h.ShapeID[0])
	}
	nv := append([]float32(nil), moving.Vertices...)
	for i := 2; i < len(nv); i += 3 {
		nv[i] = -1 // below the static grid now
	}
	if err := tb.UpdateVertices(1, nv); err != nil {
		t.Fatal(err)
	}
	if h, _ = fast.Intersect(o, d, nil, nil, geom.FlagsAll); h.ShapeID[0] != 1 {
		t.Fatal("the scene saw the update before Refit")
	}
	fast.Refit()
	slow.Refit()
	a, _ := fast.Intersect(o, d, nil, nil, geom.FlagsAll)
	b, _ := slow.Intersect(o, d, nil, nil, geom.FlagsAll)
	if math.Abs(float64(a.T[0])-5) > 1e-5 || a.ShapeID[0] != 0 || !sameHits(a, b) {
		t.Fatalf("after refit: t=%g shape %d", a.T[0], a.ShapeID[0])
	}
	// A refit tree still matches brute force on random rays.
	r := newRand(t)
	ro, rd, _ := randomRays(r, tb, 2000)
	a, _ = fast.Intersect(ro, rd, nil, nil, geom.FlagsAll)
	b, _ = slow.Intersect(ro, rd, nil, nil, geom.FlagsAll)
	if !sameHits(a, b) {
		t.Fatal("refit BVH differs from brute force")
	}
}

func TestSingleRayQueries(t *testing.T) {
	for _, s := range both(t, unitTriangle) {
		hit, ok := s.Closest([3]float32{.25, .25, -1}, [3]float32{0, 0, 1}, geom.TMin, geom.DefaultTMax)
		if !ok || hit != (Hit{T: 1, U: .25, V: .25, Prim: 0}) {
			t.Fatalf("Closest = %+v %v", hit, ok)
		}
		if _, ok := s.Closest([3]float32{.25, .25, -1}, [3]float32{0, 0, 1}, geom.TMin, .5); ok {
			t.Fatal("Closest ignores tmax")
		}
		if !s.AnyHit([3]float32{.25, .25, -1}, [3]float32{0, 0, 1}, 0, 1) || s.AnyHit([3]float32{.25, .25, -1}, [3]float32{0, 0, -1}, 0, 10) {
			t.Fatal("AnyHit")
		}
		if s.NumFaces() != 1 || s.Tables().NumMeshes() != 1 {
			t.Fatal("accessors")
		}
	}
}
