package rayd_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/shard"
)

func TestReplicatedSceneOnSimulatedDevices(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 3))
	meshes := []rayd.Mesh{testscene.Grid(24, 2, 0), testscene.Sphere([3]float32{0, 0, 0.4}, 0.3, 16, 8)}
	meshes[0].Dynamic = true
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, 3001)
	rays := rayd.Rays{Origins: o, Directions: d, TMax: tmax}
	single := cpuScene(t, meshes...)
	for _, n := range []int{2, 4} {
		cluster := simdev.New(simdev.Config{Devices: n, LinkBytesPerSecond: 50e9, RowNanos: 5})
		devs := make([]int, n)
		for i := range devs {
			devs[i] = i
		}
		s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...), rayd.WithReplicaSource(cluster),
			rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 64}))
		require.NoError(t, err)
		assert.Equal(t, devs, s.Devices())
		got, err := s.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		want, err := single.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		assert.True(t, testscene.SameHits(got, want), "%d devices: sharded intersect differs", n)
		require.NotNil(t, s.LastDispatch())
		assert.Equal(t, shard.ModePipelined, s.LastDispatch().Mode)
		gr, err := s.TraceReflections(ctx, rays, 4)
		require.NoError(t, err)
		wr, err := single.TraceReflections(ctx, rays, 4)
		require.NoError(t, err)
		assert.True(t, testscene.SameReflections(gr, wr))
		w, err := s.DeviceWeights("intersect")
		require.NoError(t, err)
		assert.Len(t, w, n)
		require.NoError(t, s.Close())
	}
}

func TestReplicatedSceneBroadcastsUpdates(t *testing.T) {
	ctx := context.Background()
	meshes := []rayd.Mesh{unitTriangle()}
	cluster := simdev.New(simdev.Config{Devices: 2})
	s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1), rayd.WithReplicaSource(cluster),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1}))
	require.NoError(t, err)
	defer s.Close()
	n := 1000
	rays := rayd.Rays{Origins: make([]float32, 3*n), Directions: make([]float32, 3*n)}
	for i := 0; i < n; i++ {
		copy(rays.Origins[3*i:], []float32{0.2, 0.2, -1})
		copy(rays.Directions[3*i:], []float32{0, 0, 1})
	}
	require.NoError(t, s.UpdateVertices(ctx, 0, []float32{0, 0, 3, 1, 0, 3, 0, 1, 3}))
	h, err := s.Intersect(ctx, rays, rayd.FlagsNone)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		require.Equal(t, float32(4), h.T[i], "row %d saw stale geometry", i)
	}
}

func TestReplicatedSceneValidation(t *testing.T) {
	ctx := context.Background()
	cluster := simdev.New(simdev.Config{Devices: 2})
	_, err := rayd.NewScene(ctx, []rayd.Mesh{unitTriangle()}, rayd.WithDevices(0, 1), rayd.WithReplicaSource(cluster),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{Weights: []float64{1}}))
	assert.ErrorIs(t, err, shard.ErrInvalidOption)
	_, err = rayd.NewScene(ctx, []rayd.Mesh{unitTriangle()}, rayd.WithDevices(0, 0), rayd.WithReplicaSource(cluster))
	assert.ErrorIs(t, err, shard.ErrInvalidDevices)
	_, err = rayd.NewScene(ctx, []rayd.Mesh{unitTriangle()}, rayd.WithDevices(0, 5), rayd.WithReplicaSource(cluster))
	var de *shard.DeviceError
	assert.True(t, errors.As(err, &de), "%v", err)
	// One device without a chunking knob is the plain scene (no layer).
	s, err := rayd.NewScene(ctx, []rayd.Mesh{unitTriangle()}, rayd.WithDevices(0), rayd.WithReplicaSource(cluster),
		rayd.WithBackend(rayd.BackendCPU))
	require.NoError(t, err)
	assert.Nil(t, s.LastDispatch())
	require.NoError(t, s.Close())
}
