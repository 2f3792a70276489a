package shard_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/shard"
)

// failingTopo answers like a driver whose queries failed.
type failingTopo struct {
	count int
	peer  bool
	err   error
}

func (f failingTopo) DeviceCount() int              { return f.count }
func (f failingTopo) CanAccessPeer(a, b int) bool   { return a == b || f.peer }
func (f failingTopo) Identity(d int) shard.Identity { return shard.Identity{Name: "gpu", Major: 9} }
func (f failingTopo) Err() error                    { return f.err }

// A refusal caused by a failed driver query is reported as that failure,
// not as the missing device or peer access it stood in for.
func TestPlanReportsTheFailedTopologyQuery(t *testing.T) {
	driverErr := errors.New("cuDeviceCanAccessPeer on device 0: CUDA_ERROR_LAUNCH_FAILED")
	_, err := shard.Plan([]int{0, 1}, failingTopo{count: 0, err: driverErr}, shard.Options{})
	require.ErrorIs(t, err, shard.ErrTopologyQuery)
	assert.ErrorIs(t, err, driverErr)
	_, err = shard.Plan([]int{0, 1}, failingTopo{count: 2, peer: false, err: driverErr}, shard.Options{})
	assert.ErrorIs(t, err, driverErr)
	// Without a recorded failure the refusal is the topology's own.
	_, err = shard.Plan([]int{0, 1}, failingTopo{count: 0}, shard.Options{})
	assert.ErrorIs(t, err, shard.ErrNoDevices)
	_, err = shard.Plan([]int{0, 1}, failingTopo{count: 2, peer: false}, shard.Options{})
	var te *shard.TopologyError
	assert.ErrorAs(t, err, &te)
}
