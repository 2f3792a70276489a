package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sameClosest compares every field of two records bit for bit.
func sameClosest(a, b *geom.ClosestPoints) bool {
	return equalBits(a.Dist, b.Dist) && equalBits(a.Point, b.Point) && equalBits(a.Bary, b.Bary) &&
		testscene.EqualSlices(a.GlobalFaceID, b.GlobalFaceID) && testscene.EqualSlices(a.ShapeID, b.ShapeID) &&
		testscene.EqualSlices(a.LocalFaceID, b.LocalFaceID)
}

// closestQueries mixes points drawn around the scene's box, points on and
// above scene vertices and edge midpoints (exact ties between the faces
// that share them), and points far away.
func closestQueries(r *rand.Rand, tb *geom.Tables, n int) []float32 {
	lo, hi := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i, v := range tb.Vertices {
		lo[i%3], hi[i%3] = min(lo[i%3], float64(v)), max(hi[i%3], float64(v))
	}
	ext := max(hi[0]-lo[0], hi[1]-lo[1], hi[2]-lo[2])
	pts := make([]float32, 0, 3*n)
	for len(pts) < 3*n {
		var p [3]float32
		switch r.IntN(5) {
		case 0, 1: // anywhere around the box
			for k := range 3 {
				p[k] = float32(lo[k] + (r.Float64()*1.4-0.2)*(hi[k]-lo[k]+ext*1e-3))
			}
		case 2: // on or above a vertex
			v := r.IntN(tb.NumVertices())
			for k := range 3 {
				p[k] = tb.Vertices[3*v+k]
			}
			p[r.IntN(3)] += float32(r.IntN(3)) * float32(ext) / 8
		case 3: // on or above an edge midpoint
			f := r.IntN(tb.NumFaces())
			a, b, _ := tb.Triangle(f)
			for k := range 3 {
				p[k] = a[k]/2 + b[k]/2
			}
			p[2] += float32(r.IntN(2)) * float32(ext) / 4
		default: // far away
			for k := range 3 {
				p[k] = float32((lo[k] + hi[k]) / 2 * (1 + r.NormFloat64()*10))
			}
		}
		pts = append(pts, p[:]...)
	}
	return pts
}

// checkParity asserts that the BVH scene and the brute-force scene agree
// bit for bit over the queries, for several distance bounds.
func checkParity(t *testing.T, name string, meshes ...geom.Mesh) {
	t.Helper()
	s, brute := scenes(t, meshes...)
	r := newRand(t)
	pts := closestQueries(r, s.Tables(), 600)
	active := make([]bool, len(pts)/3)
	for i := range active {
		active[i] = i%17 != 5
	}
	for _, md := range []float32{0, float32(math.Inf(1)), 1e-3, 0.1, 1, -2} {
		a, err := s.ClosestPoints(pts, md, active)
		require.NoError(t, err)
		b, err := brute.ClosestPoints(pts, md, active)
		require.NoError(t, err)
		if !sameClosest(a, b) {
			for i := range a.Len() {
				if a.GlobalFaceID[i] != b.GlobalFaceID[i] || math.Float32bits(a.Dist[i]) != math.Float32bits(b.Dist[i]) {
					t.Fatalf("%s maxDist %v row %d %v: bvh face %d dist %v, brute face %d dist %v", name, md, i,
						pts[3*i:3*i+3], a.GlobalFaceID[i], a.Dist[i], b.GlobalFaceID[i], b.Dist[i])
				}
			}
			t.Fatalf("%s maxDist %v: records differ", name, md)
		}
		checkIndependently(t, name, s.Tables(), pts, md, active, a)
	}
}

func TestClosestPointsBVHEqualsBruteForce(t *testing.T) {
	r := newRand(t)
	tilted := gridMesh(12, 2, 0.5)
	for i := 2; i < len(tilted.Vertices); i += 3 {
		tilted.Vertices[i] += tilted.Vertices[i-2] / 4
	}
	for _, c := range []struct {
		name   string
		meshes []geom.Mesh
	}{
		{"soup", []geom.Mesh{soupMesh(r, 300, 0.2)}},
		{"thin soup", []geom.Mesh{soupMesh(r, 200, 1e-4)}},
		{"flat grid", []geom.Mesh{gridMesh(16, 2, 0)}},
		{"stacked grids", []geom.Mesh{gridMesh(8, 2, 0), gridMesh(8, 2, 0), gridMesh(6, 2, 0.25)}},
		{"tilted grid", []geom.Mesh{tilted}},
		{"sphere and box", []geom.Mesh{sphereMesh([3]float32{0, 0, 0}, 1, 16, 12), boxMesh([3]float32{2, 0, 0}, [3]float32{0.5, 0.5, 0.5})}},
		{"huge", []geom.Mesh{scaled(soupMesh(r, 100, 0.3), 1e30), scaled(gridMesh(6, 2, 0), 3e37)}},
		{"small", []geom.Mesh{scaled(soupMesh(r, 100, 0.3), 1e-30), scaled(gridMesh(6, 2, 0), 1e-35)}},
		{"degenerate", []geom.Mesh{degenerateMesh()}},
	} {
		checkParity(t, c.name, c.meshes...)
	}
}

// scaled multiplies every coordinate of m by k.
func scaled(m geom.Mesh, k float32) geom.Mesh {
	v := make([]float32, len(m.Vertices))
	for i, x := range m.Vertices {
		v[i] = x * k
	}
	return geom.Mesh{Vertices: v, Faces: m.Faces}
}

// degenerateMesh holds points, segments (collinear vertices in every
// order) and needle triangles, some of them coinciding.
func degenerateMesh() geom.Mesh {
	v := []float32{
		0, 0, 0, 1, 0, 0, 2, 0, 0, // collinear
		0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, // a point
		0, 1, 0, 1, 1, 0, 1, 1 + 1e-7, 0, // a needle
		0, 0, 1, 0, 0, 1, 1, 1, 1, // a repeated vertex
	}
	f := []int32{0, 1, 2, 2, 0, 1, 1, 2, 0, 3, 4, 5, 6, 7, 8, 8, 6, 7, 9, 10, 11, 11, 9, 10, 0, 2, 1}
	return geom.Mesh{Vertices: v, Faces: f}
}

// A point above a grid vertex is exactly as far from every face around
// the vertex; the lowest global face id among them wins.
func TestClosestPointsTiesGoToTheLowestFaceID(t *testing.T) {
	grid := gridMesh(8, 2, 0)
	s, brute := scenes(t, grid, grid) // every face also repeated in a second mesh
	tb := s.Tables()
	var pts []float32
	for v := range tb.NumVertices() / 2 {
		pts = append(pts, tb.Vertices[3*v], tb.Vertices[3*v+1], tb.Vertices[3*v+2]+float32(v%3)*0.375)
	}
	for _, sc := range []*Scene{s, brute} {
		c, err := sc.ClosestPoints(pts, 0, nil)
		require.NoError(t, err)
		for i := range c.Len() {
			want := int32(math.MaxInt32)
			for f := range tb.NumFaces() {
				for j := range 3 {
					if tb.Faces[3*f+j] == int32(i) {
						want = min(want, int32(f))
					}
				}
			}
			require.Equal(t, want, c.GlobalFaceID[i], "vertex %d", i)
			assert.Equal(t, float32(i%3)*0.375, c.Dist[i])
			assert.Equal(t, int32(0), c.ShapeID[i])
			assert.Equal(t, pts[3*i:3*i+2], c.Point[3*i:3*i+2])
		}
	}
}

// Hand-derived answers on the unit triangle (0,0,0), (1,0,0), (0,1,0).
func TestClosestPointsOnTheUnitTriangle(t *testing.T) {
	s, _ := scenes(t, unitTriangle)
	nan := float32(math.NaN())
	pts := []float32{
		0.25, 0.25, 1, // interior
		-1, -1, 0, // vertex v0
		0.5, -1, 0, // edge v0v1
		1, 1, 0, // edge v1v2
		0, 3, 0, // vertex v2
		nan, 0, 0, // not finite
		0.25, 0.25, 1, // inactive
	}
	active := []bool{true, true, true, true, true, true, false}
	c, err := s.ClosestPoints(pts, 0, active)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0, 0, 0, 0, -1, -1}, c.GlobalFaceID)
	assert.Equal(t, []int32{0, 0, 0, 0, 0, -1, -1}, c.LocalFaceID)
	inf := float32(math.Inf(1))
	assert.Equal(t, []float32{1, float32(math.Sqrt2), 1, float32(math.Sqrt(0.5)), 2, inf, inf}, c.Dist)
	assert.Equal(t, []float32{0.25, 0.25, 0, 0, 0, 0, 0.5, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, c.Point)
	assert.Equal(t, []float32{0.5, 0.25, 0.25, 1, 0, 0, 0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0, 0, 0, 0}, c.Bary)

	// The bound is inclusive: at distance exactly 1 the face is found,
	// just below it is not.
	c, err = s.ClosestPoints(pts[:3], 1, nil)
	require.NoError(t, err)
	assert.True(t, c.Valid(0))
	c, err = s.ClosestPoints(pts[:3], math.Nextafter32(1, 0), nil)
	require.NoError(t, err)
	assert.False(t, c.Valid(0))
	assert.Equal(t, inf, c.Dist[0])

	c, err = s.ClosestPoints(nil, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, 0, c.Len())
}

// After new vertices and Refit the tree (same topology, new boxes) still
// answers like brute force, and both see the new geometry.
func TestClosestPointsAfterRefit(t *testing.T) {
	r := newRand(t)
	grid := gridMesh(10, 2, 0)
	grid.Dynamic = true
	s, brute := scenes(t, grid)
	moved := append([]float32(nil), grid.Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] = float32(r.NormFloat64()) + moved[i-2]*3
	}
	require.NoError(t, s.Tables().UpdateVertices(0, moved))
	s.Refit()
	brute.Refit()
	pts := closestQueries(r, s.Tables(), 400)
	a, err := s.ClosestPoints(pts, 0, nil)
	require.NoError(t, err)
	b, err := brute.ClosestPoints(pts, 0, nil)
	require.NoError(t, err)
	require.True(t, sameClosest(a, b))
	active := make([]bool, a.Len())
	for i := range active {
		active[i] = true
	}
	checkIndependently(t, "refit grid", s.Tables(), pts, 0, active, a)
}
