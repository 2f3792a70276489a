package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/shard"
)

// maskedGPURows is the row count of the masked GPU parity tests.
const maskedGPURows = 65536

// maskedBatch is a random batch over meshes with per-ray limits.
func maskedBatch(t *testing.T, r *rand.Rand, meshes []rayd.Mesh) (rayd.Rays, []float32) {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, maskedGPURows)
	tmin, mask := testscene.RandomLimits(r, maskedGPURows, tmax)
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.8
	}
	return rayd.Rays{Origins: o, Directions: d, TMax: tmax, TMin: tmin, Mask: mask}, end
}

// checkMaskedParity requires got's Intersect, TraceReflections and Visible
// to equal want's bit for bit on rays (with and without their limits).
// Each masked query follows an unmasked one on the same scene, so stale
// scratch of the earlier call would show as a difference.
func checkMaskedParity(t *testing.T, name string, want, got *rayd.Scene, rays rayd.Rays, end []float32) {
	t.Helper()
	ctx := context.Background()
	plain := rays
	plain.TMin, plain.Mask = nil, nil
	for _, rr := range []rayd.Rays{plain, rays} {
		w, err := want.Intersect(ctx, rr, rayd.FlagsAll)
		require.NoError(t, err)
		g, err := got.Intersect(ctx, rr, rayd.FlagsAll)
		require.NoError(t, err, name)
		require.True(t, testscene.SameHits(g, w), "%s intersect: first difference at row %d", name, testscene.FirstDiff(g, w))
		wr, err := want.TraceReflections(ctx, rr, 3)
		require.NoError(t, err)
		gr, err := got.TraceReflections(ctx, rr, 3)
		require.NoError(t, err, name)
		require.True(t, testscene.SameReflections(gr, wr), "%s trace_reflections", name)
	}
	wv, err := want.Visible(ctx, rays.Origins, end, nil)
	require.NoError(t, err)
	gv, err := got.Visible(ctx, rays.Origins, end, nil)
	require.NoError(t, err, name)
	require.Equal(t, wv, gv, "%s visible", name)
}

// TestGPUMaskedQueriesMatchTheCPU: on the CUDA BVH backend, 65,536 rows with
// random tmin and ray masks over meshes with random masks answer bitwise
// like the CPU backend (intersect, trace_reflections, visible), after
// SetMeshMask changes and after every mask is reset to the default (the
// unmasked kernels again), and visible_pair (the masked blocker kernels)
// too. The OptiX backend is compared under its tie rule in
// TestGPUOptiXMaskedQueriesAgreeUnderTheTieRule.
func TestGPUMaskedQueriesMatchTheCPU(t *testing.T) {
	ord := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 71))
	meshes := parityScenes[3].meshes(r) // mixed: grid, soup, sphere
	for m, v := range testscene.RandomMeshMasks(r, len(meshes)) {
		meshes[m].Mask = rayd.Mask(v)
	}
	want := cpuScene(t, meshes...)
	scenes := gpuBackendScenes(t, ord, meshes)
	got := scenes["cuda"]
	rays, end := maskedBatch(t, r, meshes)
	checkMaskedParity(t, "built with masks", want, got, rays, end)

	for _, s := range []*rayd.Scene{want, got} {
		require.NoError(t, s.SetMeshMask(ctx, 1, 0x06))
		require.NoError(t, s.SetMeshMask(ctx, 2, 0))
	}
	checkMaskedParity(t, "after SetMeshMask", want, got, rays, end)

	requireSamePairs(t, "cuda visible_pair with mesh masks", want, got, rays.Origins, end)

	for _, s := range []*rayd.Scene{want, got} {
		for m := range meshes {
			require.NoError(t, s.SetMeshMask(ctx, m, rayd.DefaultMask))
		}
	}
	checkMaskedParity(t, "after reset", want, got, rays, end)
	requireSamePairs(t, "cuda visible_pair after reset", want, got, rays.Origins, end)
}

// requireSamePairs requires got's visible_pair to equal want's on the
// segments from start to end and to the midpoint of each.
func requireSamePairs(t *testing.T, name string, want, got *rayd.Scene, start, end []float32) {
	t.Helper()
	ctx := context.Background()
	mid := make([]float32, len(end))
	for i := range mid {
		mid[i] = (start[i] + end[i]) / 2
	}
	wa, wb, err := want.VisiblePair(ctx, start, end, mid, nil, nil)
	require.NoError(t, err)
	ga, gb, err := got.VisiblePair(ctx, start, end, mid, nil, nil)
	require.NoError(t, err, name)
	require.Equal(t, wa, ga, name)
	require.Equal(t, wb, gb, name)
}

// TestGPUMaskedReplicatedIsBitwiseOneGPU: a replicated scene (two GPUs, or
// one GPU named twice) answers masked and tmin-bounded intersect,
// trace_reflections and visible bitwise like a one-GPU scene, chunked and
// after a SetMeshMask broadcast; its device fast path honours the mesh
// masks and avoids the compact route (no masked compact kernel), even when
// compact is forced.
func TestGPUMaskedReplicatedIsBitwiseOneGPU(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 73))
	meshes := parityScenes[3].meshes(r)
	for m, v := range testscene.RandomMeshMasks(r, len(meshes)) {
		meshes[m].Mask = rayd.Mask(v)
	}
	one, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA))
	require.NoError(t, err)
	t.Cleanup(func() { _ = one.Close() })
	two, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...), rayd.WithMultiDevice(rayd.MultiDeviceOptions{
		MinRaysPerDevice: 1024, ChunkRays: 20000, AllowSameDevice: same, Transfer: shard.TransferCompact}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = two.Close() })
	rays, end := maskedBatch(t, r, meshes)
	checkMaskedParity(t, "replicated", one, two, rays, end)
	for _, s := range []*rayd.Scene{one, two} {
		require.NoError(t, s.SetMeshMask(ctx, 0, 0x06))
	}
	checkMaskedParity(t, "replicated after SetMeshMask", one, two, rays, end)

	// Without a chunking knob a device call may go direct: with compact
	// forced, a masked scene still takes peer-direct (no masked compact
	// kernel). (two, chunked, copies every chunk.)
	direct, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...), rayd.WithMultiDevice(rayd.MultiDeviceOptions{
		MinRaysPerDevice: 1024, AllowSameDevice: same, Transfer: shard.TransferCompact}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = direct.Close() })
	require.NoError(t, direct.SetMeshMask(ctx, 0, 0x06))
	plain := rayd.Rays{Origins: rays.Origins, Directions: rays.Directions}
	_, _, got := intersectInto(t, direct, plain)
	require.Equal(t, shard.PathPeerDirect, direct.LastDispatch().Path, "masked scenes take no compact route")
	want, err := one.Intersect(ctx, plain, rayd.FlagsAll)
	require.NoError(t, err)
	require.True(t, testscene.SameHits(want, got), "replicated IntersectInto with mesh masks differs from 1 GPU")
	_, err = two.UploadRays(ctx, rays)
	require.ErrorIs(t, err, rayd.ErrInvalidArgument, "device rays carry no per-ray limits")
}
