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
)

// instancedMaskFixture is an instanced scene's meshes, instances and a
// batch of rays (random and aimed at the instances) with per-ray limits.
type instancedMaskFixture struct {
	meshes []rayd.Mesh
	in     []rayd.Instance
	rays   rayd.Rays
	stale  rayd.Rays // other rays, run first to leave stale rows in the scratch buffers
}

func newInstancedMaskFixture(t *testing.T, r *rand.Rand, instances, rows int) *instancedMaskFixture {
	t.Helper()
	meshes := []rayd.Mesh{testscene.Grid(20, 1.5, 0), testscene.Soup(r, 600, 0.1), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 16, 8)}
	in := testscene.RandomInstances(r, len(meshes), instances, 1.5)
	in = append(in, in[1], in[1]) // coincident copies: ties to the lowest visible id
	masks := testscene.RandomInstanceMasks(r, len(in))
	for i := range in {
		in[i].Mask = rayd.Mask(masks[i])
	}
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, rows)
	tmin, mask := testscene.RandomLimits(r, rows, tmax)
	po, pd, _ := testscene.RandomRays(r, tb, rows)
	return &instancedMaskFixture{meshes: meshes, in: in,
		rays:  rayd.Rays{Origins: o, Directions: d, TMax: tmax, TMin: tmin, Mask: mask},
		stale: rayd.Rays{Origins: po, Directions: pd}}
}

// checkInstancedParity requires got's Intersect to equal want's bit for bit
// on the fixture's rays with and without their limits, for three flag
// sets, each query after one with other rays on the same scene.
func checkInstancedParity(t *testing.T, what string, want, got *rayd.Scene, f *instancedMaskFixture) {
	t.Helper()
	ctx := context.Background()
	plain := f.rays
	plain.TMin, plain.Mask = nil, nil
	tminOnly := plain
	tminOnly.TMin = f.rays.TMin
	for _, rr := range []rayd.Rays{plain, f.rays, tminOnly} {
		for _, flags := range []rayd.Flags{rayd.FlagsAll, rayd.FlagsNone, rayd.FlagGeometric} {
			_, err := got.Intersect(ctx, f.stale, rayd.FlagsAll)
			require.NoError(t, err)
			w, err := want.Intersect(ctx, rr, flags)
			require.NoError(t, err)
			g, err := got.Intersect(ctx, rr, flags)
			require.NoError(t, err, what)
			require.True(t, testscene.SameHits(w, g), "%s (flags %v, limits %v): first difference at row %d",
				what, flags, rr.TMin != nil || rr.Mask != nil, testscene.FirstDiff(w, g))
		}
	}
}

// updateBoth applies the same instance and mesh mask changes and transform
// update to every scene.
func updateBoth(t *testing.T, r *rand.Rand, f *instancedMaskFixture, scenes ...*rayd.Scene) {
	t.Helper()
	ctx := context.Background()
	moved := make([]rayd.Transform, len(f.in))
	for i := range moved {
		moved[i] = testscene.RandomTransform(r, 1.5)
	}
	inst, mask := r.IntN(len(f.in)), testscene.RandomInstanceMasks(r, 1)[0]
	for _, s := range scenes {
		require.NoError(t, s.SetInstanceTransforms(ctx, 0, moved))
		require.NoError(t, s.SetInstanceMask(ctx, inst, mask))
		require.NoError(t, s.SetMeshMask(ctx, 1, 0x06))
	}
}

// resetMasks sets every instance and mesh mask back to the default.
func resetMasks(t *testing.T, f *instancedMaskFixture, scenes ...*rayd.Scene) {
	t.Helper()
	ctx := context.Background()
	for _, s := range scenes {
		for i := range f.in {
			require.NoError(t, s.SetInstanceMask(ctx, i, rayd.DefaultMask))
		}
		for m := range f.meshes {
			require.NoError(t, s.SetMeshMask(ctx, m, rayd.DefaultMask))
		}
	}
}

// TestGPUInstancedMasksMatchTheCPU: an instanced scene on the CUDA BVH with
// instance masks (Instance.Mask, SetInstanceMask), mesh masks
// (Mesh.Mask, SetMeshMask) and rows with random TMin and Mask answers
// Intersect bit for bit like the CPU backend (the reference), with and
// without the limits, after SetInstanceTransforms and mask changes, and
// once every mask is reset (the unmasked kernels again).
func TestGPUInstancedMasksMatchTheCPU(t *testing.T) {
	dev := gputest.MustHaveDevices(t, 1)[0]
	ctx := context.Background()
	r := testscene.Rand(t)
	f := newInstancedMaskFixture(t, r, 300, 40000)
	f.meshes[2].Mask = rayd.Mask(0x03)
	want := instancedCPU(t, f.meshes, f.in)
	got, err := rayd.NewScene(ctx, f.meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(dev), rayd.WithInstances(f.in))
	require.NoError(t, err)
	defer got.Close()
	checkInstancedParity(t, "built", want, got, f)
	updateBoth(t, r, f, want, got)
	checkInstancedParity(t, "updated", want, got, f)
	resetMasks(t, f, want, got)
	checkInstancedParity(t, "masks reset", want, got, f)
}

// TestGPUInstancedMasksReplicatedEqualsOneGPU: a replicated instanced
// scene (two devices, or two replicas on one device) with instance masks,
// mesh masks and rows with TMin and Mask answers Intersect bit for bit
// like the one-GPU scene and the CPU backend, the rows split unevenly,
// after mask changes and a transform update broadcast to every replica.
func TestGPUInstancedMasksReplicatedEqualsOneGPU(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	r := testscene.Rand(t)
	f := newInstancedMaskFixture(t, r, 200, 30001)
	f.meshes[0].Mask = rayd.Mask(0x05)
	rep, err := rayd.NewScene(ctx, f.meshes, rayd.WithInstances(f.in), rayd.WithDevices(devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1, AllowSameDevice: same, Weights: []float64{1, 2}}))
	require.NoError(t, err)
	defer rep.Close()
	one, err := rayd.NewScene(ctx, f.meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(devs[0]), rayd.WithInstances(f.in))
	require.NoError(t, err)
	defer one.Close()
	cpu := instancedCPU(t, f.meshes, f.in)
	checkInstancedParity(t, "built", one, rep, f)
	checkInstancedParity(t, "built, one GPU", cpu, one, f)
	updateBoth(t, r, f, rep, one, cpu)
	checkInstancedParity(t, "updated", one, rep, f)
	checkInstancedParity(t, "updated, one GPU", cpu, one, f)
	resetMasks(t, f, rep, one)
	checkInstancedParity(t, "masks reset", one, rep, f)
}
