package rayd_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// maskedInstancedRef is the reference of an instanced scene with the given
// mesh and instance masks.
func maskedInstancedRef(t *testing.T, meshes []rayd.Mesh, in []rayd.Instance, meshMasks, instMasks []uint8) *ref.InstancedScene {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	for m, v := range meshMasks {
		require.NoError(t, tb.SetMask(m, v))
	}
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	for i, v := range instMasks {
		require.NoError(t, x.SetMask(i, v))
	}
	s, err := ref.NewInstancedScene(context.Background(), tb, x)
	require.NoError(t, err)
	return s
}

// The CPU backend answers the instanced intersect with per-ray tmin and
// masks, mesh masks and instance masks exactly as the reference does, and
// setting every mask back restores the unmasked answer.
func TestInstanceMasksMatchReference(t *testing.T) {
	ctx := context.Background()
	r := testscene.Rand(t)
	meshes := []rayd.Mesh{testscene.Sphere([3]float32{0, 0, 0}, 0.4, 10, 8), testscene.Soup(r, 120, 0.6)}
	in := testscene.RandomInstances(r, len(meshes), 16, 1)
	s := instancedCPU(t, meshes, in)
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, 3000)
	tmin, mask := testscene.RandomLimits(r, 3000, tmax)
	plain, err := s.Intersect(ctx, rayd.Rays{Origins: o, Directions: d, TMax: tmax}, rayd.FlagsAll)
	require.NoError(t, err)

	meshMasks := []uint8{0x03, 0x05}
	instMasks := testscene.RandomInstanceMasks(r, len(in))
	for m, v := range meshMasks {
		require.NoError(t, s.SetMeshMask(ctx, m, v))
	}
	for i, v := range instMasks {
		require.NoError(t, s.SetInstanceMask(ctx, i, v))
		got, err := s.InstanceMask(i)
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
	want := maskedInstancedRef(t, meshes, in, meshMasks, instMasks)
	for _, lim := range []geom.RayLimits{{}, {TMin: tmin}, {Mask: mask}, {TMin: tmin, Mask: mask}} {
		got, err := s.Intersect(ctx, rayd.Rays{Origins: o, Directions: d, TMax: tmax, TMin: lim.TMin, Mask: lim.Mask}, rayd.FlagsAll)
		require.NoError(t, err)
		exp, err := want.IntersectLimits(ctx, o, d, tmax, nil, lim, rayd.FlagsAll)
		require.NoError(t, err)
		require.True(t, testscene.SameHits(exp, got), "first difference at row %d", testscene.FirstDiff(exp, got))
	}
	for m := range meshMasks {
		require.NoError(t, s.SetMeshMask(ctx, m, rayd.DefaultMask))
	}
	for i := range instMasks {
		require.NoError(t, s.SetInstanceMask(ctx, i, rayd.DefaultMask))
	}
	got, err := s.Intersect(ctx, rayd.Rays{Origins: o, Directions: d, TMax: tmax}, rayd.FlagsAll)
	require.NoError(t, err)
	require.True(t, testscene.SameHits(plain, got), "default masks restore the answer: first difference at row %d", testscene.FirstDiff(plain, got))
}

// Instance.Mask at NewScene is the instance's mask: InstanceMask and
// Instances report it, and the rays see the instance accordingly.
func TestInstanceMaskAtBuild(t *testing.T) {
	ctx := context.Background()
	grid := testscene.Grid(2, 1, 0)
	s := instancedCPU(t, []rayd.Mesh{grid}, []rayd.Instance{
		{Geometry: 0, Transform: rayd.IdentityTransform},
		{Geometry: 0, Transform: testscene.Translation(0, 0, 1), Mask: rayd.Mask(0x02)}})
	m, err := s.InstanceMask(1)
	require.NoError(t, err)
	require.Equal(t, uint8(0x02), m)
	m, err = s.InstanceMask(0)
	require.NoError(t, err)
	require.Equal(t, rayd.DefaultMask, m)
	got := s.Instances()
	require.Nil(t, got[0].Mask, "the default mask is reported as nil")
	require.Equal(t, rayd.Mask(0x02), got[1].Mask)

	rays := rayd.Rays{Origins: []float32{0.3, 0.3, 3, 0.3, 0.3, 3, 0.3, 0.3, 3}, Directions: []float32{0, 0, -1, 0, 0, -1, 0, 0, -1},
		Mask: []uint8{0x01, 0x02, 0xFF}, TMin: []float32{0, 0, 2.5}}
	h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	require.Equal(t, []float32{3, 2, 3}, h.T)
	require.Equal(t, []int32{0, 1, 0}, h.InstanceID)
}

func TestInstanceMaskErrors(t *testing.T) {
	ctx := context.Background()
	grid := testscene.Grid(2, 1, 0)
	s := instancedCPU(t, []rayd.Mesh{grid}, []rayd.Instance{{Geometry: 0, Transform: rayd.IdentityTransform}})
	for _, i := range []int{-1, 1} {
		err := s.SetInstanceMask(ctx, i, 0)
		require.ErrorIs(t, err, rayd.ErrInstanceGeometry)
		require.ErrorIs(t, err, rayd.ErrInvalidArgument)
		_, err = s.InstanceMask(i)
		require.ErrorIs(t, err, rayd.ErrInstanceGeometry)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.SetInstanceMask(cancelled, 0, 0), context.Canceled)
	m, err := s.InstanceMask(0)
	require.NoError(t, err)
	require.Equal(t, rayd.DefaultMask, m, "a refused SetInstanceMask changes nothing")

	plain, err := rayd.NewScene(ctx, []rayd.Mesh{grid}, rayd.WithBackend(rayd.BackendCPU))
	require.NoError(t, err)
	defer plain.Close()
	require.ErrorIs(t, plain.SetInstanceMask(ctx, 0, 0), rayd.ErrInvalidArgument)
	_, err = plain.InstanceMask(0)
	require.ErrorIs(t, err, rayd.ErrInvalidArgument)

	require.NoError(t, s.Close())
	require.ErrorIs(t, s.SetInstanceMask(ctx, 0, 0), rayd.ErrClosed)
}

// Instance masks: a row sees an instance only when its ray mask shares a
// bit with the instance's mask. Here a ghost copy of a square (bit 0x02)
// floats above the real one; camera rays (0x01) pass through it, probe
// rays (0x02) stop on it, and hiding it from every ray restores the
// plain answer.
func ExampleScene_SetInstanceMask() {
	ctx := context.Background()
	square := rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	ghost := rayd.Transform{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{square}, rayd.WithBackend(rayd.BackendCPU),
		rayd.WithInstances([]rayd.Instance{{Geometry: 0, Transform: rayd.IdentityTransform},
			{Geometry: 0, Transform: ghost, Mask: rayd.Mask(0x02)}}))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rays := rayd.Rays{Origins: []float32{0.5, 0.5, 3, 0.5, 0.5, 3}, Directions: []float32{0, 0, -1, 0, 0, -1},
		Mask: []uint8{0x01, 0x02}}
	h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	if err != nil {
		panic(err)
	}
	fmt.Println("t:", h.T, "instances:", h.InstanceID)
	if err := s.SetInstanceMask(ctx, 1, 0); err != nil {
		panic(err)
	}
	h, err = s.Intersect(ctx, rays, rayd.FlagsAll)
	if err != nil {
		panic(err)
	}
	fmt.Println("t:", h.T, "instances:", h.InstanceID)
	// Output:
	// t: [3 2] instances: [0 1]
	// t: [3 3] instances: [0 0]
}
