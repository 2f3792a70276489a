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

// TestGPUVisibilityVariantsMatchTheCPU: on the CUDA BVH and OptiX backends
// the visibility variants equal the CPU backend's answers (first blocked
// prims included), before and after a vertex update.
func TestGPUVisibilityVariantsMatchTheCPU(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 63))
	meshes := visibilityMeshes(r)
	want := cpuScene(t, meshes...)
	scenes := gpuBackendScenes(t, ord, meshes)
	checkVisibilityVariants(t, r, want, scenes)
	v := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = 0.1
	}
	for _, s := range append([]*rayd.Scene{want}, scenes["cuda"], scenes["optix"]) {
		require.NoError(t, s.UpdateVertices(ctx, 0, v))
	}
	checkVisibilityVariants(t, r, want, scenes)
}
