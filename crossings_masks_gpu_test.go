package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
)

// TestGPUCrossingsMeshMasksMatchTheCPU: with mesh masks set at build, after
// SetMeshMask hides a mesh (mask 0) and after every mask is reset, the CUDA
// BVH and OptiX scenes (the latter through the BVH it builds on first use,
// built before the masks change) give the CPU backend's crossings record bit
// for bit on 65,536 random segments.
func TestGPUCrossingsMeshMasksMatchTheCPU(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 75))
	meshes := visibilityMeshes(r)
	meshes[1].Mask = rayd.Mask(0)
	meshes[2].Mask = rayd.Mask(0x04)
	want := cpuScene(t, meshes...)
	scenes := gpuBackendScenes(t, ord, meshes)
	start, end, active := crossingsInputs(t, r, meshes, 1<<16)
	checkCrossings(t, want, scenes, start, end, active)
	for _, s := range append([]*rayd.Scene{want}, scenes["cuda"], scenes["optix"]) {
		require.NoError(t, s.SetMeshMask(ctx, 1, 0x02))
		require.NoError(t, s.SetMeshMask(ctx, 3, 0))
	}
	checkCrossings(t, want, scenes, start, end, active)
	for _, s := range append([]*rayd.Scene{want}, scenes["cuda"], scenes["optix"]) {
		for m := range meshes {
			require.NoError(t, s.SetMeshMask(ctx, m, rayd.DefaultMask))
		}
	}
	checkCrossings(t, want, scenes, start, end, active)
}

// TestGPUCrossingsMeshMasksReplicatedSameDevice: a replicated scene of two
// replicas on one device follows SetMeshMask in crossings: bitwise the CPU
// backend on 65,536 rows, before and after a mesh is hidden.
func TestGPUCrossingsMeshMasksReplicatedSameDevice(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 76))
	meshes := visibilityMeshes(r)
	meshes[0].Mask = rayd.Mask(0)
	want := cpuScene(t, meshes...)
	rep, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(ord, ord), rayd.WithMultiDevice(rayd.MultiDeviceOptions{
		AllowSameDevice: true, MinRaysPerDevice: 1024, Weights: []float64{1, 1}}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = rep.Close() })
	start, end, active := crossingsInputs(t, r, meshes, 1<<16)
	scenes := map[string]*rayd.Scene{"replicated-same-device": rep}
	checkCrossings(t, want, scenes, start, end, active)
	require.Len(t, rep.LastDispatch().Shards, 2, "both replicas took rows")
	for _, s := range []*rayd.Scene{want, rep} {
		require.NoError(t, s.SetMeshMask(ctx, 0, 0x10))
		require.NoError(t, s.SetMeshMask(ctx, 2, 0))
	}
	checkCrossings(t, want, scenes, start, end, active)
}
