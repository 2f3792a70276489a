package rayd_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
)

// stackedTriangles is two parallel triangles over the origin, at z = 1
// (mesh 0) and z = 2 (mesh 1).
func stackedTriangles(near, far *uint8) []rayd.Mesh {
	tri := func(z float32, m *uint8) rayd.Mesh {
		return rayd.Mesh{Vertices: []float32{-1, -1, z, 1, -1, z, 0, 1, z}, Faces: []int32{0, 1, 2}, Mask: m}
	}
	return []rayd.Mesh{tri(1, near), tri(2, far)}
}

// upRays are n rays from the origin along +z.
func upRays(n int) rayd.Rays {
	r := rayd.Rays{Origins: make([]float32, 3*n), Directions: make([]float32, 3*n)}
	for i := range n {
		r.Directions[3*i+2] = 1
	}
	return r
}

func TestMeshMasksAtBuildAndLater(t *testing.T) {
	ctx := context.Background()
	s := cpuScene(t, stackedTriangles(rayd.Mask(0x01), nil)...)
	m0, err := s.MeshMask(0)
	require.NoError(t, err)
	m1, err := s.MeshMask(1)
	require.NoError(t, err)
	assert.Equal(t, []uint8{0x01, rayd.DefaultMask}, []uint8{m0, m1})

	r := upRays(3)
	r.Mask = []uint8{0xFF, 0x02, 0x01}
	h, err := s.Intersect(ctx, r, rayd.FlagsAll)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 1}, h.T, "ray masks select the meshes they share a bit with")
	assert.Equal(t, []int32{0, 1, 0}, h.ShapeID)

	require.NoError(t, s.SetMeshMask(ctx, 0, 0))
	h, err = s.Intersect(ctx, upRays(1), rayd.FlagsAll)
	require.NoError(t, err)
	assert.Equal(t, float32(2), h.T[0], "a mesh of mask 0 is hidden")
	vis, err := s.Visible(ctx, []float32{0, 0, 0}, []float32{0, 0, 1.5}, nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, vis)
	refl, err := s.TraceReflections(ctx, upRays(1), 1)
	require.NoError(t, err)
	assert.Equal(t, []int32{1}, refl.PrimIDs)

	require.NoError(t, s.SetMeshMask(ctx, 0, rayd.DefaultMask))
	h, err = s.Intersect(ctx, upRays(1), rayd.FlagsAll)
	require.NoError(t, err)
	assert.Equal(t, float32(1), h.T[0])

	require.ErrorIs(t, s.SetMeshMask(ctx, 2, 1), rayd.ErrInvalidArgument)
	_, err = s.MeshMask(-1)
	require.ErrorIs(t, err, rayd.ErrInvalidArgument)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.SetMeshMask(ctx, 0, 1), rayd.ErrClosed)
}

func TestRayTMinBoundsTheInterval(t *testing.T) {
	ctx := context.Background()
	s := cpuScene(t, stackedTriangles(nil, nil)...)
	r := upRays(4)
	r.TMin = []float32{0, 1, 1.5, 2.5}
	h, err := s.Intersect(ctx, r, rayd.FlagsNone)
	require.NoError(t, err)
	inf := float32(math.Inf(1))
	assert.Equal(t, []float32{1, 1, 2, inf}, h.T, "tmin is inclusive")
	refl, err := s.TraceReflections(ctx, r, 1)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0, 1, -1}, refl.PrimIDs)
}

func TestRayLimitsErrors(t *testing.T) {
	ctx := context.Background()
	s := cpuScene(t, stackedTriangles(nil, nil)...)
	for name, c := range map[string]struct {
		edit func(*rayd.Rays)
		want error
	}{
		"tmin length":   {func(r *rayd.Rays) { r.TMin = []float32{0} }, rayd.ErrLength},
		"mask length":   {func(r *rayd.Rays) { r.Mask = []uint8{1} }, rayd.ErrLength},
		"tmin NaN":      {func(r *rayd.Rays) { r.TMin = []float32{0, float32(math.NaN())} }, rayd.ErrInvalidArgument},
		"tmin negative": {func(r *rayd.Rays) { r.TMin = []float32{-1e-3, 0} }, rayd.ErrInvalidArgument},
		"tmin > tmax": {func(r *rayd.Rays) {
			r.TMin, r.TMax = []float32{0, 3}, []float32{1, 2}
		}, rayd.ErrInvalidArgument},
	} {
		r := upRays(2)
		c.edit(&r)
		_, err := s.Intersect(ctx, r, rayd.FlagsAll)
		assert.ErrorIs(t, err, c.want, "%s: intersect", name)
		_, err = s.TraceReflections(ctx, r, 2)
		assert.ErrorIs(t, err, c.want, "%s: trace_reflections", name)
	}
	r := upRays(2)
	r.TMin = []float32{0, 0}
	_, err := s.NearestEdgeRay(ctx, r)
	require.ErrorIs(t, err, rayd.ErrInvalidArgument, "the nearest-edge ray query traces no triangle")
}

// A replicated scene (simulated devices) honours masks and limits bitwise
// like the CPU backend, through the row tasks and the SetMeshMask
// broadcast, visible_pair included.
func TestReplicatedSceneHonoursMasks(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(81, 82))
	meshes := parityScenes[3].meshes(r)
	for m, v := range testscene.RandomMeshMasks(r, len(meshes)) {
		meshes[m].Mask = rayd.Mask(v)
	}
	want := cpuScene(t, meshes...)
	sim, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1, ChunkRays: 700}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, 3000)
	tmin, mask := testscene.RandomLimits(r, 3000, tmax)
	rays := rayd.Rays{Origins: o, Directions: d, TMax: tmax, TMin: tmin, Mask: mask}
	check := func(what string) {
		w, err := want.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		g, err := sim.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		require.True(t, testscene.SameHits(g, w), "%s: intersect row %d", what, testscene.FirstDiff(g, w))
		wr, err := want.TraceReflections(ctx, rays, 2)
		require.NoError(t, err)
		gr, err := sim.TraceReflections(ctx, rays, 2)
		require.NoError(t, err)
		require.True(t, testscene.SameReflections(gr, wr), what)
		wv, err := want.Visible(ctx, o, d, nil)
		require.NoError(t, err)
		gv, err := sim.Visible(ctx, o, d, nil)
		require.NoError(t, err)
		require.Equal(t, wv, gv, what)
	}
	check("built with masks")
	for _, s := range []*rayd.Scene{want, sim} {
		require.NoError(t, s.SetMeshMask(ctx, 0, 0x02))
	}
	check("after SetMeshMask")
	m, err := sim.MeshMask(0)
	require.NoError(t, err)
	assert.Equal(t, uint8(0x02), m)
	ends, mids := make([]float32, 900), make([]float32, 900)
	for i := range ends {
		ends[i], mids[i] = o[i]+d[i], o[i]+d[i]/2
	}
	ga, gb, err := sim.VisiblePair(ctx, o[:900], ends, mids, nil, nil)
	require.NoError(t, err, "the visibility variants honour mesh masks")
	wa, wb, err := want.VisiblePair(ctx, o[:900], ends, mids, nil, nil)
	require.NoError(t, err)
	require.Equal(t, wa, ga)
	require.Equal(t, wb, gb)
	require.ErrorIs(t, sim.SetMeshMask(ctx, len(meshes), 1), rayd.ErrInvalidArgument)
}
