package rayd_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUInstancedSceneMatchesReference: an instanced scene on the CUDA
// BVH answers Intersect with the CPU reference's record bit for bit, after
// construction, after SetInstanceTransforms (a query with other rays
// first leaves stale rows in the scratch buffers, which must all be
// overwritten) and after UpdateVertices of a dynamic geometry.
func TestGPUInstancedSceneMatchesReference(t *testing.T) {
	dev := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := testscene.Rand(t)
	grid := testscene.Grid(24, 1.5, 0)
	grid.Dynamic = true
	meshes := []rayd.Mesh{grid, testscene.Soup(r, 800, 0.1), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 16, 8)}
	in := testscene.RandomInstances(r, len(meshes), 300, 1.5)
	s, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(dev), rayd.WithInstances(in))
	require.NoError(t, err)
	defer s.Close()

	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	want, err := ref.NewInstancedScene(ctx, tb, x)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, 20000)
	po, pd, _ := testscene.RandomRays(r, tb, 20000)
	check := func(what string) {
		t.Helper()
		_, err := s.Intersect(ctx, rayd.Rays{Origins: po, Directions: pd}, rayd.FlagsAll) // stale scratch
		require.NoError(t, err)
		for _, flags := range []rayd.Flags{rayd.FlagsAll, rayd.FlagsNone, rayd.FlagGeometric} {
			got, err := s.Intersect(ctx, rayd.Rays{Origins: o, Directions: d, TMax: tmax}, flags)
			require.NoError(t, err)
			exp, err := want.Intersect(ctx, o, d, tmax, nil, flags)
			require.NoError(t, err)
			require.True(t, testscene.SameHits(exp, got), "%s flags %v: first difference at row %d", what, flags, testscene.FirstDiff(exp, got))
		}
	}
	check("built")
	moved := make([]rayd.Transform, 300)
	for i := range moved {
		moved[i] = testscene.RandomTransform(r, 1.5)
	}
	require.NoError(t, s.SetInstanceTransforms(ctx, 0, moved))
	require.NoError(t, x.SetTransforms(0, moved))
	check("transforms updated")
	v := append([]float32(nil), grid.Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = float32(0.1 * r.Float64())
	}
	require.NoError(t, s.UpdateVertices(ctx, 0, v))
	require.NoError(t, tb.UpdateVertices(0, v))
	require.NoError(t, want.Refit(ctx))
	check("vertices updated")
}

// TestGPUInstancedReplicatedEqualsOneGPU: a replicated instanced scene
// (two devices, or two replicas on one device) answers Intersect bit for
// bit like the one-GPU scene and the CPU reference, with the rows split
// unevenly, and follows a transform update broadcast to every replica.
func TestGPUInstancedReplicatedEqualsOneGPU(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	r := testscene.Rand(t)
	meshes := []rayd.Mesh{testscene.Grid(20, 1.5, 0), testscene.Soup(r, 600, 0.1)}
	in := testscene.RandomInstances(r, len(meshes), 200, 1.5)
	rep, err := rayd.NewScene(ctx, meshes, rayd.WithInstances(in), rayd.WithDevices(devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1, AllowSameDevice: same, Weights: []float64{1, 2}}))
	require.NoError(t, err)
	defer rep.Close()
	one, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(devs[0]), rayd.WithInstances(in))
	require.NoError(t, err)
	defer one.Close()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, 30001)
	active := make([]bool, len(tmax))
	for i := range active {
		active[i] = r.IntN(7) != 0
	}
	rays := rayd.Rays{Origins: o, Directions: d, TMax: tmax, Active: active}
	check := func(what string) {
		t.Helper()
		a, err := rep.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		b, err := one.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		require.True(t, testscene.SameHits(b, a), "%s: first difference at row %d", what, testscene.FirstDiff(b, a))
	}
	check("built")
	moved := make([]rayd.Transform, 200)
	for i := range moved {
		moved[i] = testscene.RandomTransform(r, 1.5)
	}
	require.NoError(t, rep.SetInstanceTransforms(ctx, 0, moved))
	require.NoError(t, one.SetInstanceTransforms(ctx, 0, moved))
	check("transforms updated")
}
