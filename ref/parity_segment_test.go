package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
)

// halfRayCount is the crossing count of the former definition: every face
// the half ray p + t·ParityDirection(), t ∈ [tiny, +∞), crosses under the
// watertight test, by brute force.
func halfRayCount(s *Scene, p [3]float32) int32 {
	tiny := float32(math.SmallestNonzeroFloat32)
	k := int32(0)
	for f := range s.tris {
		tr := &s.tris[f]
		if _, _, _, ok := geom.Watertight(p, ParityDirection(), tr[0], tr[1], tr[2], tiny, float32(math.Inf(1))); ok {
			k++
		}
	}
	return k
}

// randomClosedMeshes is a few spheres and boxes of random placement and
// size; some overlap or nest.
func randomClosedMeshes(r *rand.Rand) []geom.Mesh {
	var ms []geom.Mesh
	for range 3 {
		c := [3]float32{float32(r.Float64()*8 - 4), float32(r.Float64()*8 - 4), float32(r.Float64()*8 - 4)}
		ms = append(ms, sphereMesh(c, 0.5+2*r.Float64(), 8+r.IntN(24), 6+r.IntN(16)))
	}
	for range 2 {
		c := [3]float32{float32(r.Float64()*8 - 4), float32(r.Float64()*8 - 4), float32(r.Float64()*8 - 4)}
		h := [3]float32{float32(0.3 + 2*r.Float64()), float32(0.3 + 2*r.Float64()), float32(0.3 + 2*r.Float64())}
		ms = append(ms, boxMesh(c, h))
	}
	return ms
}

// The parity segment's count equals the former half ray's on random closed
// meshes for points away from every face (1e-3 and more), and its parity is
// the number of meshes around the point. Both the BVH and the brute-force
// scene answer it.
func TestCrossingCountsEqualTheHalfRayCount(t *testing.T) {
	r := newRand(t)
	for trial := range 4 {
		s, brute := scenes(t, randomClosedMeshes(r)...)
		var pts []float32
		for range 400 {
			pts = append(pts, float32(r.Float64()*14-7), float32(r.Float64()*14-7), float32(r.Float64()*14-7))
		}
		cp, err := s.ClosestPoints(pts, 0, nil)
		require.NoError(t, err)
		c, err := s.CrossingCounts(pts, nil)
		require.NoError(t, err)
		cb, err := brute.CrossingCounts(pts, nil)
		require.NoError(t, err)
		assert.Equal(t, c, cb, "trial %d: BVH and brute force", trial)
		w, err := s.WindingNumbers(pts, nil)
		require.NoError(t, err)
		compared, odd := 0, 0
		for i := range c {
			if cp.Dist[i] < 1e-3 {
				continue
			}
			compared++
			p := row3(pts, i)
			require.Equal(t, halfRayCount(s, p), c[i], "trial %d row %d %v", trial, i, p)
			// Each closed mesh around the point adds an odd count and 1 to
			// the winding number (every mesh is oriented outward).
			depth := int32(math.Round(float64(w[i])))
			assert.Equal(t, depth%2, c[i]%2, "trial %d row %d: count %d, winding %v", trial, i, c[i], w[i])
			if c[i]%2 == 1 {
				odd++
			}
		}
		assert.Greater(t, compared, 300, "trial %d: points compared", trial)
		assert.Positive(t, odd, "trial %d: some points are inside", trial)
	}
}

// A point on a face does not count that face (it lies within 2e-5 of the
// point along the segment): on the bottom of a box the segment enters it
// and crosses the top (1), on the top it leaves at once (0).
func TestCrossingCountsOnTheSurface(t *testing.T) {
	s, _ := scenes(t, boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1}))
	c, err := s.CrossingCounts([]float32{0.3, 0.2, -1, 0.3, 0.2, 1, 0.3, 0.2, 0}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 0, 1}, c)
}

// The segment ends beyond every face whatever the point: a far point whose
// segment passes through the box still counts both of its faces.
func TestCrossingCountsReachBeyondTheScene(t *testing.T) {
	s, _ := scenes(t, boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1}))
	assert.Equal(t, float32(1), s.ParityReach())
	d := ParityDirection()
	far := []float32{-1e4 * d[0], -1e4 * d[1], -1e4 * d[2], 1e6, 1e6, 1e6}
	c, err := s.CrossingCounts(far, nil)
	require.NoError(t, err)
	assert.Equal(t, []int32{2, 0}, c)
	e := geom.ParityEnd(row3(far, 0), s.ParityReach())
	for k := range 3 {
		assert.Greater(t, e[k], float32(1), "the end lies past the box on axis %d", k)
	}
}

// Segments through a shared edge or vertex: sweeping the point in steps of
// one float32 ulp across the place whose segment meets the diagonal of a
// two-triangle square (edge) or the centre of a four-triangle fan
// (vertex), the watertight test leaves no gap: every segment counts one
// face or several of those sharing the edge or vertex, never none.
func TestCrossingCountsThroughEdgesAndVertices(t *testing.T) {
	d := ParityDirection()
	// A point (a, b, 0) reaches z = 1 at (a + kx, b + ky).
	kx, ky := d[0]/d[2], d[1]/d[2]
	square := geom.Mesh{Vertices: []float32{-1, -1, 1, 1, -1, 1, 1, 1, 1, -1, 1, 1}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	fan := geom.Mesh{Vertices: []float32{0, 0, 1, -1, -1, 1, 1, -1, 1, 1, 1, 1, -1, 1, 1},
		Faces: []int32{0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 1}}
	var edgePts, vertexPts []float32
	for i := -200; i <= 200; i++ { // across x = y, b = 0
		edgePts = append(edgePts, ulps(ky-kx, i), 0, 0)
	}
	for i := -60; i <= 60; i++ { // around (0, 0, 1)
		for j := -60; j <= 60; j++ {
			vertexPts = append(vertexPts, ulps(-kx, i), ulps(-ky, j), 0)
		}
	}
	for name, c := range map[string]struct {
		m   geom.Mesh
		pts []float32
	}{"edge": {square, edgePts}, "vertex": {fan, vertexPts}} {
		s, _ := scenes(t, c.m)
		cnt, err := s.CrossingCounts(c.pts, nil)
		require.NoError(t, err)
		several := 0
		for i, v := range cnt {
			require.GreaterOrEqual(t, v, int32(1), "%s row %d %v: a gap", name, i, row3(c.pts, i))
			require.LessOrEqual(t, v, int32(len(c.m.Faces)/3), "%s row %d", name, i)
			if v > 1 {
				several++
			}
		}
		t.Logf("%s: %d of %d segments count more than one face", name, several, len(cnt))
		// The sweep crosses the edge or vertex: its segments reach every face.
		c1, err := s.Crossings(c.pts, geom.ParityEnds(c.pts, s.ParityReach()), nil, 1)
		require.NoError(t, err)
		reached := map[int32]bool{}
		for _, p := range c1.Prim {
			reached[p] = true
		}
		assert.Len(t, reached, len(c.m.Faces)/3, "%s: faces reached", name)
	}
}

// ulps is x moved by k float32 units in the last place.
func ulps(x float32, k int) float32 {
	for ; k > 0; k-- {
		x = math.Nextafter32(x, float32(math.Inf(1)))
	}
	for ; k < 0; k++ {
		x = math.Nextafter32(x, float32(math.Inf(-1)))
	}
	return x
}
