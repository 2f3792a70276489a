package edge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// edgeScene builds a Scene straight from edge endpoints (6 floats per edge);
// only the endpoints matter to the ray queries.
func edgeScene(ends []float32) *Scene {
	n := len(ends) / 6
	e := &Edges{V0: make([]int32, n), V1: make([]int32, n), Face0: make([]int32, n), Face1: make([]int32, n),
		Opposite: make([]int32, n), ShapeID: make([]int32, n), LocalID: make([]int32, n)}
	for i := range n {
		e.V0[i], e.V1[i], e.Face1[i], e.LocalID[i] = int32(2*i), int32(2*i+1), -1, int32(i)
	}
	return &Scene{Tables: &geom.Tables{Vertices: ends}, Edges: e}
}

// walkScenes are the scenes of the traversal check at center c and size s:
// a soup of random edges, an integer grid of axis-aligned edges (exact ties
// and flat query axes), and a soup with degenerate and duplicated edges.
func walkScenes(r *rand.Rand, c, s float64) map[string]*Scene {
	p := func(x float64) float32 { return float32(c + x*s) }
	soup := func(n int, size float64) []float32 {
		var v []float32
		for range n {
			m := [3]float64{r.Float64()*2 - 1, r.Float64()*2 - 1, r.Float64()*2 - 1}
			for range 2 {
				for k := range 3 {
					v = append(v, p(m[k]+(r.Float64()*2-1)*size))
				}
			}
		}
		return v
	}
	var grid []float32
	for i := -4; i <= 4; i++ {
		for j := -4; j <= 4; j++ {
			x, y := float64(i)/4, float64(j)/4
			grid = append(grid, p(x), p(y), p(0), p(x+0.25), p(y), p(0), p(x), p(y), p(0), p(x), p(y+0.25), p(0))
		}
	}
	degen := soup(300, 0.2)
	for i := 0; i+6 <= len(degen); i += 24 {
		copy(degen[i+3:i+6], degen[i:i+3]) // a point edge
		if i+12 <= len(degen) {
			copy(degen[i+6:i+12], degen[i:i+6]) // a duplicate of it
		}
	}
	return map[string]*Scene{"soup": edgeScene(soup(1500, 0.08)), "grid": edgeScene(grid), "degenerate": edgeScene(degen)}
}

// walkQuery draws a query around the scene (center c, size s): origins in
// the grown box or on grid points, directions from randDir (flat, tiny,
// subnormal, zero, huge), ranges from randRange.
func walkQuery(r *rand.Rand, c, s float64) (o, d vec, T float64) {
	for k := range 3 {
		o[k] = f32(c + (r.Float64()*3-1.5)*s)
		if r.IntN(4) == 0 {
			o[k] = f32(c + float64(r.IntN(9)-4)/4*s)
		}
	}
	d = randDir(r)
	return o, d, randRange(r, s, d)
}

// TestPrune32WalkEqualsScan: the mirrored GPU traversal (float32 node test,
// float32 prefilter, float64 distances at the leaves) returns the brute-force
// scan's edge, distance² and parameters bit for bit, over scenes at unit,
// tiny, huge and offset scales and beyond the test's range, with and
// without a mask; and on the unit soup it opens a small part of the tree.
func TestPrune32WalkEqualsScan(t *testing.T) {
	rows := 300
	if testing.Short() {
		rows = 60
	}
	if *prune32Rows > 0 {
		rows = *prune32Rows
	}
	seed := rand.Uint64()
	for _, sc := range []struct {
		name string
		c, s float64
	}{{"unit", 0, 1}, {"tiny", 0, 1e-25}, {"huge", 0, 1e22}, {"offset", 1e4, 1e-2}, {"beyond", 0, 1e30}} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(len(sc.name))))
			for name, s := range walkScenes(r, sc.c, sc.s) {
				checkWalk(t, r, sc.name+"/"+name, s, sc.c, sc.s, rows)
			}
		})
	}
}

// checkWalk compares the mirrored walk with the scan on rows queries,
// without and with a random mask.
func checkWalk(t *testing.T, r *rand.Rand, name string, s *Scene, c, size float64, rows int) {
	t.Helper()
	x := NewIndex(s)
	for _, masked := range []bool{false, true} {
		if masked {
			m := make([]bool, s.Edges.Len())
			for i := range m {
				m[i] = r.IntN(3) != 0
			}
			s.Mask = m
		}
		var nodes, exact, scanned int
		for range rows {
			o, d, T := walkQuery(r, c, size)
			id, tt, se, d2, st := x.nearestRay32(o, d, T)
			wid, wt, wse, wd2 := s.nearestRay(o, d, T)
			if id != wid || math.Float64bits(d2) != math.Float64bits(wd2) ||
				math.Float64bits(tt) != math.Float64bits(wt) || math.Float64bits(se) != math.Float64bits(wse) {
				t.Fatalf("%s masked %v: o %v d %v T %g: walk (%d, %g, %g, %g), scan (%d, %g, %g, %g)",
					name, masked, o, d, T, id, d2, tt, se, wid, wd2, wt, wse)
			}
			nodes, exact = nodes+st.nodes, exact+st.exact
			if st.scanned {
				scanned++
			}
		}
		beyond := size > range32
		if beyond != (scanned == rows) || (!beyond && scanned > 0) {
			t.Fatalf("%s: %d of %d rows scanned every record", name, scanned, rows)
		}
		if name == "unit/soup" && !masked {
			t.Logf("unit soup: %d nodes, %d edges; per query %.1f nodes opened, %.1f exact distances",
				len(x.nodes), s.Edges.Len(), float64(nodes)/float64(rows), float64(exact)/float64(rows))
			if exact > rows*s.Edges.Len()/4 || nodes > rows*len(x.nodes)/4 {
				t.Fatalf("the walk prunes too little: %d nodes, %d exact over %d rows", nodes, exact, rows)
			}
		}
	}
}
