package accel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// endsScene is a scene straight from edge endpoints (6 floats per edge):
// edge i joins vertices 2i and 2i+1, one shape, boundary edges.
func endsScene(ends []float32) *edge.Scene {
	n := len(ends) / 6
	e := &edge.Edges{V0: make([]int32, n), V1: make([]int32, n), Face0: make([]int32, n), Face1: make([]int32, n),
		Opposite: make([]int32, n), ShapeID: make([]int32, n), LocalID: make([]int32, n)}
	for i := range n {
		e.V0[i], e.V1[i], e.Face1[i], e.LocalID[i] = int32(2*i), int32(2*i+1), -1, int32(i)
	}
	return &edge.Scene{Tables: &geom.Tables{Vertices: ends}, Edges: e}
}

// rayScenes are the scenes of the ray kernels' adversarial checks, at center
// c and size s: a triangle soup; the light benchmark's flat grid (edges that
// tie exactly, queries far from the plane); a cubic lattice of axis-aligned
// edges (exact ties, flat query axes); degenerate edges (points, duplicates,
// edges one ulp long).
func rayScenes(t testing.TB, r *rand.Rand, c, s float64) map[string]*edge.Scene {
	t.Helper()
	move := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(c + float64(x)*s)
		}
		return out
	}
	soup := cloudMesh(500, 0.06, r.Uint64())
	soup.Vertices = move(soup.Vertices)
	grid := gridMesh(14, 2)
	grid.Vertices = move(grid.Vertices)
	var lattice []float32
	for i := -2; i <= 2; i++ {
		for j := -2; j <= 2; j++ {
			for k := -2; k <= 2; k++ {
				x, y, z := float32(i)/2, float32(j)/2, float32(k)/2
				lattice = append(lattice, x, y, z, x+0.5, y, z, x, y, z, x, y+0.5, z, x, y, z, x, y, z+0.5)
			}
		}
	}
	degen := make([]float32, 0, 6*400)
	for range 400 {
		var a, b [3]float32
		for k := range 3 {
			a[k] = float32(r.Float64()*2 - 1)
			b[k] = a[k] + float32((r.Float64()*2-1)*0.1)
		}
		switch r.IntN(4) {
		case 0:
			b = a
		case 1:
			k := r.IntN(3)
			b = a
			b[k] = math.Nextafter32(a[k], 2)
		}
		degen = append(degen, a[0], a[1], a[2], b[0], b[1], b[2])
		if r.IntN(5) == 0 { // a duplicate, reversed
			degen = append(degen, b[0], b[1], b[2], a[0], a[1], a[2])
		}
	}
	return map[string]*edge.Scene{
		"soup":       edge.NewScene(tables(t, soup)),
		"grid":       edge.NewScene(tables(t, grid)),
		"lattice":    endsScene(move(lattice)),
		"degenerate": endsScene(move(degen)),
	}
}

// rayQueries draws n rows around the scene (center c, size s): origins in
// the grown box, on vertices or off the grid's plane; directions from
// randDir32 aimed at vertices and edge points; ranges from randRange32, with
// NaN, −1 and −Inf among them.
func rayQueries(r *rand.Rand, es *edge.Scene, c, s float64, n int) (o, d, tmax []float32) {
	v := es.Tables.Vertices
	nv := len(v) / 3
	vert := func() [3]float64 {
		i := r.IntN(nv)
		return [3]float64{float64(v[3*i]), float64(v[3*i+1]), float64(v[3*i+2])}
	}
	o, d, tmax = make([]float32, 3*n), make([]float32, 3*n), make([]float32, n)
	for i := range n {
		var oi [3]float64
		for k := range 3 {
			oi[k] = c + (r.Float64()*3-1.5)*s
		}
		if r.IntN(5) == 0 {
			oi = vert()
		}
		target := vert()
		if r.IntN(2) == 0 { // an edge point
			w, u := vert(), r.Float64()
			for k := range 3 {
				target[k] += u * (w[k] - target[k])
			}
		}
		var to [3]float64
		for k := range 3 {
			o[3*i+k] = float32(oi[k])
			to[k] = target[k] - float64(o[3*i+k])
		}
		di := randDir32(r, to)
		copy(d[3*i:], di[:])
		tmax[i] = randRange32(r)
		switch r.IntN(40) {
		case 0:
			tmax[i] = float32(math.NaN())
		case 1:
			tmax[i] = -1
		case 2:
			tmax[i] = float32(math.Inf(-1))
		}
	}
	return o, d, tmax
}

// raySameAsReference compares a mirrored hit with row i of the reference:
// the global id and the float32 distance and parameters the kernels write.
func raySameAsReference(h EdgeRayHit, want *edge.RayResult, i int) bool {
	if h.Global != want.GlobalEdgeID[i] {
		return false
	}
	if h.Global < 0 {
		return true
	}
	f := func(x float64, y float32) bool {
		return math.Float32bits(float32(x)) == math.Float32bits(y) || (x == 0 && y == 0)
	}
	return f(math.Sqrt(h.D2), want.Distance[i]) && f(h.T, want.RayT[i]) && f(h.S, want.EdgeT[i])
}

// TestNearestEdgeRayMirrorsEqualTheReference: the host walks of the pruned
// and the exact ray kernels return, on every adversarial scene, scale and
// query, with and without an edge mask, the CPU reference's record (the
// brute-force scan's) bit for bit, and the same hit as each other. Rows are
// deferred to the float64 walk only outside the float32 tests' range; and on
// the soup the pruned walk opens a small part of the tree.
func TestNearestEdgeRayMirrorsEqualTheReference(t *testing.T) {
	rows := 300
	if testing.Short() {
		rows = 100
	}
	seed := testscene.Seed(t)
	for _, sc := range pruneScales {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(len(sc.name))))
			for name, es := range rayScenes(t, r, sc.c, sc.s) {
				lay, err := BuildEdgesHost(es.Tables.Vertices, EdgeTablesOf(es.Edges), EdgeOptions)
				require.NoError(t, err)
				for _, masked := range []bool{false, true} {
					es.Mask = nil
					if masked {
						es.Mask = make([]bool, es.Edges.Len())
						for i := range es.Mask {
							es.Mask[i] = r.IntN(3) != 0
						}
					}
					label := fmt.Sprintf("%s/%s masked=%v", sc.name, name, masked)
					o, d, tmax := rayQueries(r, es, sc.c, sc.s, rows)
					want, err := es.NearestRay(o, d, tmax, nil)
					require.NoError(t, err)
					var pst, est EdgeRayStats
					for i := range rows {
						oi, di := [3]float32(o[3*i:3*i+3]), [3]float32(d[3*i:3*i+3])
						got := lay.NearestEdgeRay(EdgeRayPruned, oi, di, tmax[i], es.Mask, &pst)
						ex := lay.NearestEdgeRay(EdgeRayExact, oi, di, tmax[i], es.Mask, &est)
						require.True(t, raySameAsReference(got, want, i), "%s row %d (o %v d %v tmax %g): pruned %+v, reference gid %d d %g",
							label, i, oi, di, tmax[i], got, want.GlobalEdgeID[i], want.Distance[i])
						require.Equal(t, ex, got, "%s row %d: exact and pruned walks differ", label, i)
					}
					if sc.name == "beyond" {
						assert.Equal(t, countWalked(o, d, tmax), pst.Deferred, "%s: every walked row is deferred", label)
					} else if sc.name != "tiny" && sc.name != "range" { // those two reach the ends of the range
						assert.Less(t, pst.Deferred, rows/4, "%s: rows deferred", label)
					}
					if name == "soup" && !masked && sc.name == "unit" {
						t.Logf("%s: per row %.1f nodes (of %d), %.1f float64 pairs (exact walk: %.1f nodes, %.1f pairs)", label,
							float64(pst.Nodes)/float64(rows), lay.NumNodes, float64(pst.Exact)/float64(rows),
							float64(est.Nodes)/float64(rows), float64(est.Exact)/float64(rows))
						assert.Less(t, pst.Nodes, rows*lay.NumNodes/8, "the pruned walk prunes")
					}
				}
			}
		})
	}
}

// countWalked is the number of rows a kernel walks (finite o and d, tmax
// not NaN).
func countWalked(o, d, tmax []float32) int {
	n := 0
	for i := range tmax {
		if finite3([3]float32(o[3*i:3*i+3])) && finite3([3]float32(d[3*i:3*i+3])) && !math.IsNaN(float64(tmax[i])) {
			n++
		}
	}
	return n
}
