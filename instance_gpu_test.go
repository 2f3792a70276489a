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
