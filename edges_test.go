package rayd_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
)

// edgeMeshes is a grid (a dynamic mesh) beside a soup; the soup has its
// edges disabled in half the cases.
func edgeMeshes(r *rand.Rand, soupEdges bool) []rayd.Mesh {
	g := testscene.Grid(10, 2, 0)
	g.Dynamic = true
	soup := testscene.Soup(r, 300, 0.1)
	soup.EdgesDisabled = !soupEdges
	return []rayd.Mesh{g, soup}
}

func randomPoints(r *rand.Rand, n int) []float32 {
	p := make([]float32, 3*n)
	for i := range p {
		p[i] = float32(r.Float64()*3 - 1.5)
	}
	return p
}

// The scene's edge queries are the edge package's reference on the same
// tables, on the CPU backend and on a replicated scene, through masks and a
// vertex update.
func TestSceneEdgeQueriesMatchTheReference(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(51, 52))
	for _, soupEdges := range []bool{true, false} {
		meshes := edgeMeshes(r, soupEdges)
		scenes := map[string]*rayd.Scene{"cpu": cpuScene(t, meshes...)}
		sim, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1),
			rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})))
		require.NoError(t, err)
		t.Cleanup(func() { _ = sim.Close() })
		scenes["replicated"] = sim
		checkSceneEdges(t, r, meshes, scenes)
	}
}

// checkSceneEdges compares every scene's edge queries with the reference
// on fresh random batches: plain, masked (the mask is honoured and a wrong
// length refused) and after a vertex update of mesh 0 (the mask survives).
func checkSceneEdges(t *testing.T, r *rand.Rand, meshes []rayd.Mesh, scenes map[string]*rayd.Scene) {
	t.Helper()
	ctx := context.Background()
	{
		tb, err := geom.BuildTables(meshes)
		require.NoError(t, err)
		ref := edge.NewScene(tb)
		p := randomPoints(r, 3000)
		o, d := randomPoints(r, 500), randomPoints(r, 500)
		for name, s := range scenes {
			require.Equal(t, ref.Edges.Len(), s.NumEdges(), name)
			got, err := s.NearestEdge(ctx, p)
			require.NoError(t, err)
			want, err := ref.NearestPoint(p, nil)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%s nearest edge", name)
			gk, err := s.NearestEdges(ctx, p, 4, nil)
			require.NoError(t, err)
			wk, err := ref.NearestK(p, 4, nil)
			require.NoError(t, err)
			assert.Equal(t, wk, gk, "%s top-4", name)
			gr, err := s.NearestEdgeRay(ctx, rayd.Rays{Origins: o, Directions: d})
			require.NoError(t, err)
			wr, err := ref.NearestRay(o, d, nil, nil)
			require.NoError(t, err)
			assert.Equal(t, wr, gr, "%s ray", name)

			// A mask removes edges; clearing it restores them.
			mask := make([]bool, s.NumEdges())
			for i := range mask {
				mask[i] = i%3 != 0
			}
			require.NoError(t, s.SetEdgeMask(ctx, mask))
			assert.Equal(t, mask, s.EdgeMask())
			require.NoError(t, ref.SetMask(mask))
			got, err = s.NearestEdge(ctx, p)
			require.NoError(t, err)
			want, _ = ref.NearestPoint(p, nil)
			assert.Equal(t, want, got, "%s masked", name)
			for i := range got.Len() {
				if got.Valid(i) {
					require.True(t, mask[got.GlobalEdgeID[i]], "%s row %d found a masked edge", name, i)
				}
			}
			assert.ErrorIs(t, s.SetEdgeMask(ctx, mask[:1]), geom.ErrLength)
			assert.Equal(t, mask, s.EdgeMask(), "a refused mask changes nothing")

			// The queries follow a vertex update (the mask survives it).
			v := append([]float32(nil), meshes[0].Vertices...)
			for i := 2; i < len(v); i += 3 {
				v[i] = 0.25
			}
			require.NoError(t, s.UpdateVertices(ctx, 0, v))
			tb2, err := geom.BuildTables(meshes)
			require.NoError(t, err)
			require.NoError(t, tb2.UpdateVertices(0, v))
			ref2 := edge.NewScene(tb2)
			require.NoError(t, ref2.SetMask(mask))
			got, err = s.NearestEdge(ctx, p)
			require.NoError(t, err)
			want, _ = ref2.NearestPoint(p, nil)
			assert.Equal(t, want, got, "%s after the update", name)
			require.NoError(t, s.SetEdgeMask(ctx, nil))
			assert.Nil(t, s.EdgeMask())
			require.NoError(t, ref.SetMask(nil))
		}
	}
}

func TestSceneEdgeRefusals(t *testing.T) {
	ctx := context.Background()
	s := cpuScene(t, unitTriangle())
	_, err := s.NearestEdges(ctx, []float32{0, 0, 0}, 0, nil)
	assert.ErrorIs(t, err, geom.ErrInvalidArgument)
	_, err = s.NearestEdges(ctx, []float32{0, 0, 0}, rayd.MaxEdgesK+1, nil)
	assert.ErrorIs(t, err, geom.ErrInvalidArgument)
	_, err = s.NearestEdge(ctx, []float32{0, 0})
	assert.ErrorIs(t, err, geom.ErrLength)
	res, err := s.NearestEdge(ctx, []float32{float32(math.NaN()), 0, 0, 0.2, 0.2, 1})
	require.NoError(t, err)
	assert.False(t, res.Valid(0), "a non-finite point is a miss")
	assert.True(t, res.Valid(1))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.NearestEdge(cancelled, []float32{0, 0, 0})
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Close())
	_, err = s.NearestEdge(ctx, []float32{0, 0, 0})
	assert.ErrorIs(t, err, rayd.ErrClosed)
	assert.ErrorIs(t, s.SetEdgeMask(ctx, nil), rayd.ErrClosed)
	assert.Zero(t, s.NumEdges())
}

// The VJPs through the scene are the reference's.
func TestSceneEdgeVJPs(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(61, 62))
	meshes := edgeMeshes(r, true)
	s := cpuScene(t, meshes...)
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	ref := edge.NewScene(tb)
	p := randomPoints(r, 64)
	res, err := s.NearestEdge(ctx, p)
	require.NoError(t, err)
	g := rayd.EdgePointCotangent{Distance: make([]float64, 64)}
	for i := range g.Distance {
		g.Distance[i] = r.NormFloat64()
	}
	dp, dv, err := s.NearestEdgeVJP(ctx, p, res, g)
	require.NoError(t, err)
	wp, wv, err := ref.NearestPointVJP(p, res, g)
	require.NoError(t, err)
	assert.Equal(t, wp, dp)
	assert.Equal(t, wv, dv)
	o, d := randomPoints(r, 32), randomPoints(r, 32)
	rr, err := s.NearestEdgeRay(ctx, rayd.Rays{Origins: o, Directions: d})
	require.NoError(t, err)
	gr := rayd.EdgeRayCotangent{Distance: make([]float64, 32)}
	for i := range gr.Distance {
		gr.Distance[i] = 1
	}
	do, dd, dv2, err := s.NearestEdgeRayVJP(ctx, rayd.Rays{Origins: o, Directions: d}, rr, gr)
	require.NoError(t, err)
	wo, wd, wv2, err := ref.NearestRayVJP(o, d, nil, rr, gr)
	require.NoError(t, err)
	assert.Equal(t, wo, do)
	assert.Equal(t, wd, dd)
	assert.Equal(t, wv2, dv2)
}

// The nearest edge of a point above a unit quad (two triangles): the
// diagonal is interior, the four sides are boundary edges.
func ExampleScene_NearestEdge() {
	ctx := context.Background()
	quad := rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{quad}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	res, err := s.NearestEdge(ctx, []float32{0.5, 0.1, 0.2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d edges; nearest: edge %d at distance %.4f, edge_t %.2f\n", s.NumEdges(), res.GlobalEdgeID[0], res.Distance[0], res.EdgeT[0])
	// Output: 5 edges; nearest: edge 0 at distance 0.2236, edge_t 0.50
}
