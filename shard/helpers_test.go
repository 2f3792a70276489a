package shard_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// The shared fixture of the multi-device tests: an 8-cell grid (128
// triangles) of span 2, dynamic so that it can be updated.
func fixtureMeshes() []geom.Mesh {
	m := workload.GridMesh(8, 2)
	m.Dynamic = true
	return []geom.Mesh{m}
}

// batch is a ray and segment batch of n rows: plane rays below the grid
// aimed up, a per-row tmax, every other row active, and segments between
// random points of the box [-1.2, 1.2]³.
type batch struct {
	o, d, tmax []float32
	active     []bool
	start, end []float32
}

func newBatch(n int, seed uint64) batch {
	o, d := workload.PlaneRays(n, seed)
	r := rand.New(rand.NewPCG(seed, 7))
	b := batch{o: o, d: d, tmax: make([]float32, n), active: make([]bool, n),
		start: make([]float32, 3*n), end: make([]float32, 3*n)}
	for i := range n {
		b.tmax[i] = 0.5 + 3*r.Float32()
		b.active[i] = i%2 == 0
	}
	for i := range b.start {
		b.start[i] = r.Float32()*2.4 - 1.2
		b.end[i] = r.Float32()*2.4 - 1.2
	}
	return b
}

// reference is a single ref.Scene over the fixture.
func reference(t testing.TB) *ref.Scene {
	t.Helper()
	tables, err := geom.BuildTables(fixtureMeshes())
	require.NoError(t, err)
	s, err := ref.NewScene(tables)
	require.NoError(t, err)
	return s
}

// newLayer plans a layer on a simulated cluster of count devices and builds
// the fixture on it.
func newLayer(t testing.TB, count int, devices []int, o shard.Options) (*shard.Layer, *simdev.Cluster) {
	t.Helper()
	c := simdev.New(simdev.Config{Devices: count})
	l, err := shard.Plan(devices, c, o)
	require.NoError(t, err)
	require.NotNil(t, l, "expected a layer")
	require.NoError(t, l.Build(context.Background(), c.Builder(devices[0], fixtureMeshes())))
	c.ResetStats()
	t.Cleanup(func() {
		require.NoError(t, l.Close())
		require.Zero(t, c.LivePayloads(), "payloads leaked")
	})
	return l, c
}

func bits32(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

// requireHitsBitwise compares every field of two intersection records bit
// for bit.
func requireHitsBitwise(t testing.TB, want, got *geom.Hits) {
	t.Helper()
	require.NotNil(t, got)
	require.Equal(t, want.Flags, got.Flags)
	for name, pair := range map[string][2][]float32{
		"t": {want.T, got.T}, "p": {want.P, got.P}, "n": {want.N, got.N}, "geo_n": {want.GeoN, got.GeoN},
		"bary": {want.Bary, got.Bary}, "uv": {want.UV, got.UV},
	} {
		require.Equal(t, pair[0] == nil, pair[1] == nil, name)
		require.Equal(t, bits32(pair[0]), bits32(pair[1]), name)
	}
	require.Equal(t, want.ShapeID, got.ShapeID)
	require.Equal(t, want.PrimID, got.PrimID)
	require.Equal(t, want.LocalPrimID, got.LocalPrimID)
	require.Equal(t, want.GlobalPrimID, got.GlobalPrimID)
}

func requireReflectionsBitwise(t testing.TB, want, got *geom.Reflections) {
	t.Helper()
	require.NotNil(t, got)
	require.Equal(t, want.Bounces, got.Bounces)
	require.Equal(t, want.Valid, got.Valid)
	require.Equal(t, bits32(want.T), bits32(got.T))
	require.Equal(t, want.PrimIDs, got.PrimIDs)
	require.Equal(t, bits32(want.ImageSources), bits32(got.ImageSources))
}

// The three built-in tasks over a batch.
func intersectTask(b batch, flags geom.Flags) *shard.Intersect {
	return &shard.Intersect{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Flags: flags}
}

func reflectTask(b batch, bounces int) *shard.TraceReflections {
	return &shard.TraceReflections{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Bounces: bounces}
}

func visibleTask(b batch) *shard.Visible {
	return &shard.Visible{Start: b.start, End: b.end, Active: b.active}
}

// checkAllOps runs every per_ray operation of the §13 matrix on l and
// compares it with the reference.
func checkAllOps(t *testing.T, l *shard.Layer, s *ref.Scene, b batch) {
	t.Helper()
	ctx := context.Background()
	for _, flags := range []geom.Flags{geom.FlagsAll, geom.FlagsNone} {
		want, err := s.Intersect(b.o, b.d, b.tmax, b.active, flags)
		require.NoError(t, err)
		got, err := shard.RunRows(ctx, l, intersectTask(b, flags))
		require.NoError(t, err)
		requireHitsBitwise(t, want, got)
	}
	for _, bounces := range []int{1, 4} {
		want, err := s.TraceReflections(b.o, b.d, b.tmax, b.active, bounces)
		require.NoError(t, err)
		got, err := shard.RunRows(ctx, l, reflectTask(b, bounces))
		require.NoError(t, err)
		requireReflectionsBitwise(t, want, got)
	}
	want, err := s.Visible(b.start, b.end, b.active)
	require.NoError(t, err)
	got, err := shard.RunRows(ctx, l, visibleTask(b))
	require.NoError(t, err)
	require.Equal(t, want, got)
}
