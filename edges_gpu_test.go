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

// TestGPUSceneEdgeQueriesMatchTheReference: on the CUDA BVH and OptiX
// backends the scene's edge queries run on the device (the edge BVH) and
// equal the host reference bit for bit, through masks and a vertex update.
func TestGPUSceneEdgeQueriesMatchTheReference(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	r := rand.New(rand.NewPCG(testscene.Seed(t), 53))
	for _, soupEdges := range []bool{true, false} {
		meshes := edgeMeshes(r, soupEdges)
		checkSceneEdges(t, r, meshes, gpuBackendScenes(t, ord, meshes))
	}
}

// gpuBackendScenes builds the meshes on device ordinal with the CUDA BVH
// ("cuda") and the OptiX ("optix") backends, closed at cleanup.
func gpuBackendScenes(t *testing.T, ord int, meshes []rayd.Mesh) map[string]*rayd.Scene {
	t.Helper()
	scenes := map[string]*rayd.Scene{}
	for name, b := range map[string]rayd.Backend{"cuda": rayd.BackendCUDA, "optix": rayd.BackendOptiX} {
		s, err := rayd.NewScene(context.Background(), meshes, rayd.WithBackend(b), rayd.WithDevice(ord))
		require.NoError(t, err, name)
		t.Cleanup(func() { _ = s.Close() })
		scenes[name] = s
	}
	return scenes
}
