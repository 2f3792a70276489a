package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUClosestPointMatchesTheReference: on the CUDA BVH and OptiX
// backends ClosestPoint runs on the device and equals the CPU reference (its
// BVH path) bit for bit on 65,536 rows, bounded and unbounded, masked, and
// after a vertex update; the sign equals the CPU backend's.
func TestGPUClosestPointMatchesTheReference(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 83))
	meshes := closestMeshes(r)
	meshes = append(meshes, testscene.Soup(r, 30000, 0.03))
	scenes := gpuBackendScenes(t, ord, meshes)
	cpu := cpuScene(t, meshes...)
	check := func(step string) {
		tb, err := geom.BuildTables(meshes)
		require.NoError(t, err)
		rs, err := ref.NewScene(tb)
		require.NoError(t, err)
		points, active := closestBatch(r, 65536)
		for _, maxDist := range []float32{0, 0.05} {
			for _, act := range [][]bool{nil, active} {
				want, err := rs.ClosestPoints(points, maxDist, act)
				require.NoError(t, err)
				for name, s := range scenes {
					got, err := s.ClosestPoint(ctx, points, maxDist, rayd.ClosestOptions{Active: act})
					require.NoError(t, err, name)
					requireSameClosest(t, want, got.ClosestPointRecord, step+" "+name)
				}
			}
		}
		few := points[:3*500]
		want, err := cpu.ClosestPoint(ctx, few, 0, rayd.ClosestOptions{Sign: rayd.SignWinding})
		require.NoError(t, err)
		for name, s := range scenes {
			got, err := s.ClosestPoint(ctx, few, 0, rayd.ClosestOptions{Sign: rayd.SignWinding})
			require.NoError(t, err, name)
			assert.Equal(t, want.Sign, got.Sign, step+" "+name)
		}
	}
	check("built")
	moved := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] += 0.3 * float32(r.Float64())
	}
	for _, s := range scenes {
		require.NoError(t, s.UpdateVertices(ctx, 0, moved))
	}
	require.NoError(t, cpu.UpdateVertices(ctx, 0, moved))
	meshes[0].Vertices = moved
	check("moved")
}

// TestGPUReplicatedClosestPointIsBitwiseOneGPU: a replicated scene (two
// GPUs, or two replicas on one GPU) answers ClosestPoint bitwise like one
// GPU, before and after a broadcast vertex update.
func TestGPUReplicatedClosestPointIsBitwiseOneGPU(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 84))
	meshes := []rayd.Mesh{testscene.Soup(r, 20000, 0.02), testscene.Grid(64, 2, -0.5)}
	meshes[1].Dynamic = true
	one, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA))
	require.NoError(t, err)
	defer one.Close()
	two, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 4096, AllowSameDevice: same}))
	require.NoError(t, err)
	defer two.Close()
	compare := func(step string) {
		for _, n := range []int{1, 4095, 100003} {
			points, active := closestBatch(r, max(n, 8))
			points, active = points[:3*n], active[:n]
			for _, maxDist := range []float32{0, 0.1} {
				a, err := one.ClosestPoint(ctx, points, maxDist, rayd.ClosestOptions{Active: active})
				require.NoError(t, err)
				b, err := two.ClosestPoint(ctx, points, maxDist, rayd.ClosestOptions{Active: active})
				require.NoError(t, err)
				requireSameClosest(t, a.ClosestPointRecord, b.ClosestPointRecord, step)
			}
			t.Logf("%s n=%d dispatch %+v", step, n, two.LastDispatch())
		}
	}
	compare("built")
	v := append([]float32(nil), meshes[1].Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = 0.7
	}
	require.NoError(t, one.UpdateVertices(ctx, 1, v))
	require.NoError(t, two.UpdateVertices(ctx, 1, v))
	compare("moved")
}
