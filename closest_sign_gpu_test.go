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

// requireSameSigns runs both sign modes on every scene and compares them
// with the CPU scene's (the reference definitions), row for row.
func requireSameSigns(t *testing.T, cpu *rayd.Scene, scenes map[string]*rayd.Scene, points []float32, active []bool, step string) {
	t.Helper()
	ctx := context.Background()
	for _, mode := range []rayd.SignMode{rayd.SignParity, rayd.SignWinding} {
		want, err := cpu.ClosestPoint(ctx, points, 0, rayd.ClosestOptions{Active: active, Sign: mode})
		require.NoError(t, err)
		for name, s := range scenes {
			got, err := s.ClosestPoint(ctx, points, 0, rayd.ClosestOptions{Active: active, Sign: mode})
			require.NoError(t, err, name)
			requireSameClosest(t, want.ClosestPointRecord, got.ClosestPointRecord, step+" "+name)
			for i := range want.Sign {
				require.Equalf(t, want.Sign[i], got.Sign[i], "%s %s mode %d row %d %v", step, name, mode, i, points[3*i:3*i+3])
			}
		}
	}
}

// TestGPUClosestPointSignsMatchTheCPU: on the CUDA BVH and OptiX backends
// the parity sign (the device's Crossings) and the winding sign (the
// device's winding kernel, open rows re-checked on the host) equal the CPU
// backend's on 8,192 rows (random points, surface vertices, a NaN row,
// inactive rows) over closed, open and soup meshes with a 6,000-face soup,
// before and after a vertex update.
func TestGPUClosestPointSignsMatchTheCPU(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 87))
	meshes := append(closestMeshes(r), testscene.Soup(r, 6000, 0.05))
	scenes := gpuBackendScenes(t, ord, meshes)
	cpu := cpuScene(t, meshes...)
	points, active := signBatch(r, meshes, 8192)
	requireSameSigns(t, cpu, scenes, points, active, "built")
	moved := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] += 0.3 * float32(r.Float64())
	}
	for _, s := range scenes {
		require.NoError(t, s.UpdateVertices(ctx, 0, moved))
	}
	require.NoError(t, cpu.UpdateVertices(ctx, 0, moved))
	meshes[0].Vertices = moved
	points, active = signBatch(r, meshes, 8192)
	requireSameSigns(t, cpu, scenes, points, active, "moved")
}

// TestGPUReplicatedClosestPointSignsMatchTheCPU: a replicated scene (two
// GPUs, or two replicas on one GPU) gives both signs of the CPU backend,
// its rows sharded over the replicas (Crossings and winding_sums), before
// and after a broadcast vertex update.
func TestGPUReplicatedClosestPointSignsMatchTheCPU(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 88))
	meshes := append(closestMeshes(r), testscene.Soup(r, 4000, 0.05))
	two, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1024, AllowSameDevice: same}))
	require.NoError(t, err)
	defer two.Close()
	cpu := cpuScene(t, meshes...)
	scenes := map[string]*rayd.Scene{"replicated": two}
	points, active := signBatch(r, meshes, 10007)
	requireSameSigns(t, cpu, scenes, points, active, "built")
	t.Logf("dispatch %+v", two.LastDispatch())
	moved := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] = 0.7
	}
	require.NoError(t, two.UpdateVertices(ctx, 0, moved))
	require.NoError(t, cpu.UpdateVertices(ctx, 0, moved))
	meshes[0].Vertices = moved
	requireSameSigns(t, cpu, scenes, points, active, "moved")
}
