package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/simdev"
)

// TestVisibilityVariantsMeshMasks: under mesh masks the visibility variants
// of a replicated scene of simulated devices equal the CPU backend's, and a
// mesh of mask 0 never blocks: visible_pair answers as on a scene built
// without that mesh.
func TestVisibilityVariantsMeshMasks(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(83, 84))
	meshes := visibilityMeshes(r)
	want := cpuScene(t, meshes...)
	sim, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	for _, s := range []*rayd.Scene{want, sim} {
		require.NoError(t, s.SetMeshMask(ctx, 1, 0))
		require.NoError(t, s.SetMeshMask(ctx, 3, 0x08))
	}
	checkVisibilityVariants(t, r, want, map[string]*rayd.Scene{"replicated": sim})

	without := cpuScene(t, meshes[0], meshes[2], meshes[3])
	n := 2000
	p := make([]float32, 9*n)
	for i := range p {
		p[i] = float32(r.Float64()*2.4 - 1.2)
	}
	start, endA, endB := p[:3*n], p[3*n:6*n], p[6*n:]
	wa, wb, err := want.VisiblePair(ctx, start, endA, endB, nil, nil)
	require.NoError(t, err)
	xa, xb, err := without.VisiblePair(ctx, start, endA, endB, nil, nil)
	require.NoError(t, err)
	require.Equal(t, xa, wa, "a hidden mesh never blocks")
	require.Equal(t, xb, wb, "a hidden mesh never blocks")
	full := cpuScene(t, meshes...)
	fa, _, err := full.VisiblePair(ctx, start, endA, endB, nil, nil)
	require.NoError(t, err)
	require.NotEqual(t, fa, wa, "the hidden mesh blocks some segments when shown")
}
