package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
)

// visibilityMeshes is a closed box and sphere inside a dynamic grid floor.
func visibilityMeshes(r *rand.Rand) []rayd.Mesh {
	g := testscene.Grid(12, 3, -0.6)
	g.Dynamic = true
	return []rayd.Mesh{g, testscene.Box([3]float32{0, 0, 0}, [3]float32{0.4, 0.4, 0.4}),
		testscene.Sphere([3]float32{0.6, 0.3, 0}, 0.3, 16, 8), testscene.Soup(r, 300, 0.1)}
}

// checkVisibilityVariants runs the three variants on every scene and
// requires each to equal the reference scene's answer, and the reference to
// agree with Visible on the same segments when nothing is ignored. Ignore
// rows hold the reference's own blockers, so they change the answers.
func checkVisibilityVariants(t *testing.T, r *rand.Rand, want *rayd.Scene, scenes map[string]*rayd.Scene) {
	t.Helper()
	ctx := context.Background()
	pts := func(n int) []float32 {
		p := make([]float32, 3*n)
		for i := range p {
			p[i] = float32(r.Float64()*2.4 - 1.2)
		}
		return p
	}
	n := 3000
	start, endA, endB := pts(n), pts(n), pts(n)
	wa, wb, err := want.VisiblePair(ctx, start, endA, endB, nil, nil)
	require.NoError(t, err)
	va, err := want.Visible(ctx, start, endA, nil)
	require.NoError(t, err)
	assert.Equal(t, va, wa, "visible_pair without ignore is Visible")
	// Ignore the reference's first blocker of each row (found through a
	// one-segment chain) and a random −1 pad.
	chain := make([]float32, 0, 6*n)
	for i := range n {
		chain = append(append(chain, start[3*i:3*i+3]...), endA[3*i:3*i+3]...)
	}
	ones := make([]int32, n)
	for i := range ones {
		ones[i] = 1
	}
	c1, err := want.VisibleChain(ctx, chain, 2, ones, nil, nil)
	require.NoError(t, err)
	ignore := make([]int32, 2*n)
	for i := range n {
		ignore[2*i], ignore[2*i+1] = c1.FirstBlockedPrim[i], -1
	}
	wia, wib, err := want.VisiblePair(ctx, start, endA, endB, ignore, nil)
	require.NoError(t, err)
	active := make([]bool, n)
	for i := range active {
		active[i] = r.IntN(6) != 0
	}
	e := rayd.EdgeSamples{Source: start, Position: endA, Direction: pts(n), TMin: make([]float32, n), TMax: make([]float32, n), Active: active}
	for i := range e.TMax {
		e.TMin[i], e.TMax[i] = float32(r.Float64()*0.5), float32(r.Float64())
	}
	we, err := want.VisibleEdge(ctx, e)
	require.NoError(t, err)
	const per = 5
	long := pts(n * per)
	lens := make([]int32, n)
	for i := range lens {
		lens[i] = int32(r.IntN(per + 1))
	}
	wc, err := want.VisibleChain(ctx, long, per, lens, nil, active)
	require.NoError(t, err)
	for name, s := range scenes {
		a, b, err := s.VisiblePair(ctx, start, endA, endB, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, wa, a, "%s visible_a", name)
		assert.Equal(t, wb, b, "%s visible_b", name)
		a, b, err = s.VisiblePair(ctx, start, endA, endB, ignore, nil)
		require.NoError(t, err)
		assert.Equal(t, wia, a, "%s visible_a with ignore", name)
		assert.Equal(t, wib, b, "%s visible_b with ignore", name)
		g, err := s.VisibleEdge(ctx, e)
		require.NoError(t, err)
		assert.Equal(t, we, g, "%s visible_edge", name)
		c, err := s.VisibleChain(ctx, long, per, lens, nil, active)
		require.NoError(t, err)
		assert.Equal(t, wc, c, "%s visible_chain", name)
		c, err = s.VisibleChain(ctx, chain, 2, ones, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, c1, c, "%s one-segment chains", name)
	}
	blocked := 0
	for i := range n {
		if !va[i] {
			blocked++
			assert.NotEqual(t, int32(-1), c1.FirstBlockedPrim[i])
		}
	}
	assert.Greater(t, blocked, n/10, "the scene blocks a fair share of the segments")
}

func TestVisibilityVariantsCPUAndReplicated(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	meshes := visibilityMeshes(r)
	want := cpuScene(t, meshes...)
	sim, err := rayd.NewScene(context.Background(), meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	checkVisibilityVariants(t, r, want, map[string]*rayd.Scene{"replicated": sim})
	// After a vertex update the host reference of the replicated scene
	// follows the geometry.
	v := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = 0.1
	}
	require.NoError(t, want.UpdateVertices(context.Background(), 0, v))
	require.NoError(t, sim.UpdateVertices(context.Background(), 0, v))
	checkVisibilityVariants(t, r, want, map[string]*rayd.Scene{"replicated": sim})
}
