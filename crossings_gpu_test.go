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

// TestGPUCrossingsMatchTheCPU: on 65,536 random segments the CUDA BVH and
// OptiX scenes give the CPU backend's crossings record bit for bit for
// several k (the OptiX scene through the BVH it builds on first use),
// before and after a vertex update.
func TestGPUCrossingsMatchTheCPU(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 73))
	meshes := visibilityMeshes(r)
	want := cpuScene(t, meshes...)
	scenes := gpuBackendScenes(t, ord, meshes)
	start, end, active := crossingsInputs(t, r, meshes, 1<<16)
	checkCrossings(t, want, scenes, start, end, active)
	v := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = 0.1
	}
	for _, s := range append([]*rayd.Scene{want}, scenes["cuda"], scenes["optix"]) {
		require.NoError(t, s.UpdateVertices(ctx, 0, v))
	}
	checkCrossings(t, want, scenes, start, end, active)
}

// TestGPUCrossingsReplicatedSameDevice: a replicated scene of two replicas
// on one device (equal weights, rows split between them) gives the
// single-device CUDA scene's crossings record bit for bit on 65,536 rows,
// and both equal the CPU backend.
func TestGPUCrossingsReplicatedSameDevice(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 74))
	meshes := visibilityMeshes(r)
	one, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(ord))
	require.NoError(t, err)
	t.Cleanup(func() { _ = one.Close() })
	rep, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(ord, ord), rayd.WithMultiDevice(rayd.MultiDeviceOptions{
		AllowSameDevice: true, MinRaysPerDevice: 1024, Weights: []float64{1, 1}}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = rep.Close() })
	start, end, active := crossingsInputs(t, r, meshes, 1<<16)
	for _, k := range []int{1, 8, 33} {
		a, err := one.Crossings(ctx, start, end, k, active)
		require.NoError(t, err)
		b, err := rep.Crossings(ctx, start, end, k, active)
		require.NoError(t, err)
		require.Equal(t, -1, testscene.CrossingsDiff(b, a), "k=%d: first row where the replicated scene differs", k)
		rec := rep.LastDispatch()
		require.NotNil(t, rec)
		require.Len(t, rec.Shards, 2, "both replicas took rows")
	}
	checkCrossings(t, cpuScene(t, meshes...), map[string]*rayd.Scene{"replicated-same-device": rep}, start, end, active)
}
