package replica_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// The topology reports what the driver reports; without a driver (or
// without devices) shard.Plan refuses a multi-device request and a Source
// builds nothing. Runs, and passes, on machines with and without GPUs.
func TestTopologyFollowsTheDriver(t *testing.T) {
	topo := replica.NewTopology()
	assert.True(t, topo.CanAccessPeer(0, 0))
	if n, err := gputest.Available(); err == nil && n > 0 {
		require.NoError(t, topo.Err())
		assert.Equal(t, n, topo.DeviceCount())
		assert.NotContains(t, topo.Identity(0).Name, "unknown")
		return
	}
	assert.Zero(t, topo.DeviceCount())
	require.Error(t, topo.Err())
	assert.False(t, topo.CanAccessPeer(0, 1))
	assert.Contains(t, topo.Identity(0).Name, "unknown")
	_, err := shard.Plan([]int{0, 1}, topo, shard.Options{})
	require.ErrorIs(t, err, shard.ErrNoDevices)

	src := replica.NewSource(replica.Options{})
	_, err = src.Device(0)
	require.Error(t, err)
	_, err = src.Builder(0, []geom.Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})(context.Background(), shard.Slot{})
	require.Error(t, err)
	require.NoError(t, src.Close())
	require.NoError(t, src.Close())
	_, err = src.Device(0)
	require.Error(t, err)
}

// A closed Source refuses to open devices or build, with or without GPUs.
func TestClosedSource(t *testing.T) {
	src := replica.NewSource(replica.Options{})
	require.NoError(t, src.Close())
	_, err := src.Device(0)
	require.ErrorIs(t, err, launch.ErrClosed)
	_, err = src.Build(context.Background(), 0, 0, nil)
	require.ErrorIs(t, err, launch.ErrClosed)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = replica.NewSource(replica.Options{}).Build(ctx, 0, 0, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// The device tasks validate their buffers before the layer plans them.
func TestDeviceTaskValidation(t *testing.T) {
	cases := map[string]interface{ Rows() (int, error) }{
		"no rays":          &replica.DeviceIntersect{},
		"negative N":       &replica.DeviceIntersect{Rays: accel.Rays{N: -1}},
		"unknown flags":    &replica.DeviceIntersect{Flags: 8},
		"zero bounces":     &replica.DeviceReflections{},
		"no segments":      &replica.DeviceVisible{},
		"reflections rays": &replica.DeviceReflections{Bounces: 2},
	}
	for name, task := range cases {
		_, err := task.Rows()
		require.ErrorIs(t, err, geom.ErrInvalidArgument, name)
	}
	_, err := (&replica.DeviceIntersect{}).Rows()
	require.ErrorContains(t, err, "Rays.O")
}

// The device tasks share the byte model of the shard operations.
func TestDeviceTaskOps(t *testing.T) {
	assert.Equal(t, shard.IntersectOp(geom.FlagsAll), (&replica.DeviceIntersect{Flags: geom.FlagsAll}).Op())
	assert.Equal(t, shard.TraceReflectionsOp(3), (&replica.DeviceReflections{Bounces: 3}).Op())
	assert.Equal(t, shard.VisibleOp(), (&replica.DeviceVisible{}).Op())
	assert.Equal(t, 9*2, (&replica.DeviceReflections{Bounces: 2}).RecordRowBytes(accel.Reflections{}))
	assert.Equal(t, 1, (&replica.DeviceVisible{}).RecordRowBytes(nil))
}
