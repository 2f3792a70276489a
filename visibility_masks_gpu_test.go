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

// TestGPUVisibilityVariantsMeshMasksMatchTheCPU: with mesh masks set at
// build, after SetMeshMask and after every mask is reset, the visibility
// variants of the CUDA BVH and OptiX scenes (the latter over the BVH it
// builds on first use) and of a replicated scene of two replicas on one
// device equal the CPU backend's answers, first blocked prims included.
func TestGPUVisibilityVariantsMeshMasksMatchTheCPU(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 64))
	meshes := visibilityMeshes(r)
	meshes[1].Mask = rayd.Mask(0)
	meshes[3].Mask = rayd.Mask(0x10)
	want := cpuScene(t, meshes...)
	scenes := gpuBackendScenes(t, ord, meshes)
	rep, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(ord, ord), rayd.WithMultiDevice(rayd.MultiDeviceOptions{
		AllowSameDevice: true, MinRaysPerDevice: 256, Weights: []float64{1, 1}}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = rep.Close() })
	scenes["replicated-same-device"] = rep
	all := []*rayd.Scene{want, scenes["cuda"], scenes["optix"], rep}
	checkVisibilityVariants(t, r, want, scenes)
	for _, s := range all {
		require.NoError(t, s.SetMeshMask(ctx, 1, 0x01))
		require.NoError(t, s.SetMeshMask(ctx, 0, 0))
	}
	checkVisibilityVariants(t, r, want, scenes)
	for _, s := range all {
		for m := range meshes {
			require.NoError(t, s.SetMeshMask(ctx, m, rayd.DefaultMask))
		}
	}
	checkVisibilityVariants(t, r, want, scenes)
}
