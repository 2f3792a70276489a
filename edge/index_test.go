package edge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// indexScenes are random scenes with the structure the index must survive:
// a triangle soup (overlapping boxes), a flat grid (axis-aligned edges,
// exact ties at vertices and cell centres) and both together.
func indexScenes(t *testing.T, r *rand.Rand) map[string]*Scene {
	soup := func(n int, size float64) geom.Mesh {
		m := geom.Mesh{}
		for i := range n {
			c := [3]float64{r.Float64()*2 - 1, r.Float64()*2 - 1, r.Float64()*2 - 1}
			for range 3 {
				for k := range 3 {
					m.Vertices = append(m.Vertices, float32(c[k]+(r.Float64()*2-1)*size))
				}
			}
			m.Faces = append(m.Faces, int32(3*i), int32(3*i+1), int32(3*i+2))
		}
		return m
	}
	grid := func(cells int) geom.Mesh {
		m := geom.Mesh{}
		for j := 0; j <= cells; j++ {
			for i := 0; i <= cells; i++ {
				m.Vertices = append(m.Vertices, float32(i)/float32(cells)*2-1, float32(j)/float32(cells)*2-1, 0)
			}
		}
		w := int32(cells + 1)
		for j := range int32(cells) {
			for i := range int32(cells) {
				a := j*w + i
				m.Faces = append(m.Faces, a, a+1, a+w, a+1, a+w+1, a+w)
			}
		}
		return m
	}
	out := map[string]*Scene{}
	for name, meshes := range map[string][]geom.Mesh{
		"soup":  {soup(400, 0.1)},
		"grid":  {grid(12)},
		"mixed": {grid(8), soup(150, 0.3)},
	} {
		out[name] = NewScene(mustTables(t, meshes...))
	}
	return out
}

// queryPoints mixes uniform points, points far outside, grid vertices and
// cell centres (exact ties) and points on edges.
func queryPoints(r *rand.Rand, s *Scene, n int) []vec {
	pts := make([]vec, 0, n)
	for len(pts) < n {
		switch r.IntN(5) {
		case 0, 1:
			pts = append(pts, vec{r.Float64()*3 - 1.5, r.Float64()*3 - 1.5, r.Float64()*3 - 1.5})
		case 2:
			pts = append(pts, vec{r.Float64()*40 - 20, r.Float64()*40 - 20, r.Float64()*40 - 20})
		case 3:
			pts = append(pts, vec{float64(r.IntN(13))/6 - 1, float64(r.IntN(13))/6 - 1, 0})
		default:
			if e := s.Edges.Len(); e > 0 {
				a, b := s.endpoints(r.IntN(e))
				pts = append(pts, axpy(r.Float64(), sub(b, a), a))
			}
		}
	}
	return pts
}

// The index answers every query exactly as the scan does: same edge, same
// parameters, same float64 squared distance; with and without masks.
func TestIndexAgreesWithTheScan(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for name, s := range indexScenes(t, r) {
		for _, masked := range []bool{false, true} {
			if masked {
				mask := make([]bool, s.Edges.Len())
				for i := range mask {
					mask[i] = r.IntN(3) != 0
				}
				if err := s.SetMask(mask); err != nil {
					t.Fatal(err)
				}
			}
			x := NewIndex(s)
			pts := queryPoints(r, s, 250)
			for i, p := range pts {
				id0, s0, q0, d0 := s.nearestPoint(p)
				id1, s1, q1, d1 := x.nearestPoint(p)
				if id0 != id1 || s0 != s1 || q0 != q1 || d0 != d1 {
					t.Fatalf("%s masked=%v point %d %v: scan (%d %v %v) index (%d %v %v)", name, masked, i, p, id0, s0, d0, id1, s1, d1)
				}
				for _, k := range []int{1, 3, 16} {
					b0 := s.nearestK(p, k, nil)
					b1 := x.nearestK(p, k, nil)
					if len(b0) != len(b1) {
						t.Fatalf("%s top-%d point %d: %d vs %d slots", name, k, i, len(b0), len(b1))
					}
					for j := range b0 {
						if b0[j] != b1[j] {
							t.Fatalf("%s top-%d point %d slot %d: scan %+v index %+v", name, k, i, j, b0[j], b1[j])
						}
					}
				}
				d := vec{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
				for _, T := range []float64{0, r.Float64() * 0.5, r.Float64() * 5, math.Inf(1)} {
					id0, t0, e0, d0 := s.nearestRay(p, d, T)
					id1, t1, e1, d1 := x.nearestRay(p, d, T)
					if id0 != id1 || t0 != t1 || e0 != e1 || d0 != d1 {
						t.Fatalf("%s ray %d tmax %v: scan (%d %v %v %v) index (%d %v %v %v)", name, i, T, id0, t0, e0, d0, id1, t1, e1, d1)
					}
				}
			}
		}
	}
}

// rayBound never exceeds the distance from the query set to any point of
// the box (sampled), and equals the distance when the query passes through.
func TestRayBoundIsALowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for range 2000 {
		nd := &node{}
		for k := range 3 {
			a, b := r.Float64()*2-1, r.Float64()*2-1
			nd.lo[k], nd.hi[k] = min(a, b), max(a, b)
		}
		o := vec{r.Float64()*6 - 3, r.Float64()*6 - 3, r.Float64()*6 - 3}
		d := vec{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		T := []float64{r.Float64() * 4, math.Inf(1)}[r.IntN(2)]
		bound := rayBound(o, d, T, nd)
		// Sample the query and the box: no pair is closer than the bound.
		end := T
		if math.IsInf(end, 1) {
			end = 50
		}
		for range 200 {
			tq := r.Float64() * end
			p := axpy(tq, d, o)
			if got := pointBound(p, nd); got < bound*(1-1e-9)-1e-12 {
				t.Fatalf("bound %v above the distance %v at t=%v", bound, got, tq)
			}
		}
	}
}

// A scene large enough for the index takes it transparently: the public
// queries give the scan's answers.
func TestQueriesUseTheIndexAboveTheThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	s := indexScenes(t, r)["mixed"]
	pts := queryPoints(r, s, 5000) // several goroutines
	flat := make([]float32, 0, 3*len(pts))
	for _, p := range pts {
		flat = append(flat, float32(p[0]), float32(p[1]), float32(p[2]))
	}
	if len(pts)*s.Edges.Len() < indexWork {
		t.Fatalf("the test must cross the index threshold: %d rows × %d edges", len(pts), s.Edges.Len())
	}
	got, err := s.NearestPoint(flat, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pts {
		p, _ := load3(flat, i)
		id, _, _, d2 := s.nearestPoint(p)
		if int(got.GlobalEdgeID[i]) != id || got.Distance[i] != float32(math.Sqrt(d2)) {
			t.Fatalf("row %d: %d %v, scan %d %v", i, got.GlobalEdgeID[i], got.Distance[i], id, math.Sqrt(d2))
		}
	}
}

// selectNth puts the n-th item of the sorted order in place, with a
// partition around it, on every input shape (ties, sorted, reversed).
func TestSelectNth(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for trial := range 500 {
		n := 1 + r.IntN(60)
		v := make([]item, n)
		for i := range v {
			var key float64
			switch trial % 4 {
			case 0:
				key = float64(r.IntN(5)) // many ties
			case 1:
				key = float64(i)
			case 2:
				key = float64(n - i)
			default:
				key = r.Float64()
			}
			v[i] = item{c: vec{0, key, 0}, id: int32(i)}
		}
		r.Shuffle(n, func(i, j int) { v[i], v[j] = v[j], v[i] })
		sorted := append([]item(nil), v...)
		for i := 1; i < n; i++ {
			for j := i; j > 0 && before(&sorted[j], &sorted[j-1], 1); j-- {
				sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
			}
		}
		k := r.IntN(n)
		selectNth(v, k, 1)
		if v[k] != sorted[k] {
			t.Fatalf("trial %d: item %d is %v, want %v", trial, k, v[k], sorted[k])
		}
		for i := range n {
			if (i < k && before(&v[k], &v[i], 1)) || (i > k && before(&v[i], &v[k], 1)) {
				t.Fatalf("trial %d: item %d on the wrong side", trial, i)
			}
		}
	}
}

// Rays through a vertex meet several edges at distance 0 exactly; the
// Index must break that tie like the scan (lowest id), although a node
// bound of a box the ray touches can round to a tiny positive value: the
// absolute pruning margin keeps such a node. The scene is a tilted grid
// (z = x/4, so no bound is exactly 0 by symmetry) with a box.
func TestIndexBreaksZeroDistanceTiesLikeTheScan(t *testing.T) {
	const cells = 8
	m := geom.Mesh{}
	for j := 0; j <= cells; j++ {
		for i := 0; i <= cells; i++ {
			x := -1 + 2*float32(i)/cells
			m.Vertices = append(m.Vertices, x, -1+2*float32(j)/cells, 0.25*x)
		}
	}
	for j := 0; j < cells; j++ {
		for i := 0; i < cells; i++ {
			a := int32(j*(cells+1) + i)
			m.Faces = append(m.Faces, a, a+1, a+cells+1, a+1, a+cells+2, a+cells+1)
		}
	}
	tb, err := geom.BuildTables([]geom.Mesh{m})
	if err != nil {
		t.Fatal(err)
	}
	s := NewScene(tb)
	x := NewIndex(s)
	r := rand.New(rand.NewPCG(17, 4))
	bad := 0
	for range 20000 {
		v := r.IntN(tb.NumVertices())
		target := vec{float64(tb.Vertices[3*v]), float64(tb.Vertices[3*v+1]), float64(tb.Vertices[3*v+2])}
		o := vec{float64(float32(r.Float64()*3 - 1.5)), float64(float32(r.Float64()*3 - 1.5)), float64(float32(-0.7 + r.Float64()*0.2))}
		var d vec
		for k := range 3 {
			d[k] = float64(float32(target[k] - o[k]))
		}
		tmax := math.Inf(1)
		if r.IntN(2) == 0 {
			tmax = 1.5
		}
		wi, wt, ws, wd := s.nearestRay(o, d, tmax)
		gi, gt, gs, gd := x.nearestRay(o, d, tmax)
		if wi != gi || wt != gt || ws != gs || wd != gd {
			bad++
			if bad < 5 {
				t.Errorf("ray %v + t·%v: scan edge %d (d²=%g), index edge %d (d²=%g)", o, d, wi, wd, gi, gd)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of 20000 vertex-aimed rays differ", bad)
	}
}
