package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
)

// TestCrossingsMeshMasks: a mesh of mask 0 is never crossed (the CPU
// backend's record equals the one of a scene without that mesh, up to prim
// numbering), any nonzero mask is (segments carry the full ray mask), and a
// replicated scene of simulated devices follows SetMeshMask bit for bit.
func TestCrossingsMeshMasks(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(81, 82))
	meshes := visibilityMeshes(r)
	want := cpuScene(t, meshes...)
	sim, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})), rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	start, end, active := crossingsInputs(t, r, meshes, 3000)
	k := rayd.MaxCrossingsK
	plain, err := want.Crossings(ctx, start, end, k, active)
	require.NoError(t, err)

	for _, s := range []*rayd.Scene{want, sim} {
		require.NoError(t, s.SetMeshMask(ctx, 1, 0))
		require.NoError(t, s.SetMeshMask(ctx, 2, 0x20))
	}
	checkCrossings(t, want, map[string]*rayd.Scene{"replicated": sim}, start, end, active)
	masked, err := want.Crossings(ctx, start, end, k, active)
	require.NoError(t, err)
	hidden, kept := 0, 0
	for i := range masked.Rows() {
		keep := []int32{}
		for j := range int(plain.Count[i]) {
			if plain.Shape[i*k+j] == 1 {
				hidden++
				continue
			}
			if plain.Shape[i*k+j] == 2 {
				kept++
			}
			keep = append(keep, plain.Prim[i*k+j])
		}
		require.Equal(t, int32(len(keep)), masked.Count[i], "row %d", i)
		require.Equal(t, keep, masked.Prim[i*k:i*k+len(keep)], "row %d", i)
	}
	require.Positive(t, hidden, "the segments cross the hidden mesh")
	require.Positive(t, kept, "the segments cross the mesh of mask 0x20")

	for _, s := range []*rayd.Scene{want, sim} {
		require.NoError(t, s.SetMeshMask(ctx, 1, rayd.DefaultMask))
		require.NoError(t, s.SetMeshMask(ctx, 2, rayd.DefaultMask))
	}
	back, err := sim.Crossings(ctx, start, end, k, active)
	require.NoError(t, err)
	require.Equal(t, -1, testscene.CrossingsDiff(back, plain), "default masks give the unmasked record")
}
