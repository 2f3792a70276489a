package shard_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// SizeChunk validates what it divides by: a row costs at least one byte,
// at least one chunk is resident, and no field is negative.
func TestSizeChunkValidatesItsDivisors(t *testing.T) {
	n, src, err := shard.SizeChunk(shard.ChunkRequest{Operation: "free", Rows: 1 << 20, RowBytes: 0, Budget: 4096, Resident: 1})
	require.NoError(t, err, "RowBytes 0 is charged as one byte")
	assert.Equal(t, 4096, n)
	assert.Equal(t, shard.SourceBudget, src)
	for name, r := range map[string]shard.ChunkRequest{
		"resident 0":         {Rows: 10, RowBytes: 8, Budget: 4096},
		"resident negative":  {Rows: 10, RowBytes: 8, Budget: 4096, Resident: -3},
		"row bytes negative": {Rows: 10, RowBytes: -8, Budget: 4096, Resident: 1},
		"rows negative":      {Rows: -1, RowBytes: 8, Resident: 1},
		"chunk negative":     {Rows: 10, RowBytes: 8, ChunkRays: -2, Resident: 1},
		"budget negative":    {Rows: 10, RowBytes: 8, Budget: -1, Resident: 1},
		"fixed negative":     {Rows: 10, RowBytes: 8, Budget: 100, Fixed: -1, Resident: 1},
		"overflow":           {Rows: math.MaxInt, RowBytes: math.MaxInt, Budget: 100, Resident: 3},
	} {
		r.Operation = "op"
		_, _, err := shard.SizeChunk(r)
		require.Errorf(t, err, name)
		assert.ErrorIsf(t, err, shard.ErrInvalidPlan, name)
		assert.ErrorIsf(t, err, geom.ErrInvalidArgument, name)
		var pe *shard.PlanError
		require.ErrorAsf(t, err, &pe, name)
		assert.Equal(t, "op", pe.Operation)
	}
}

// A caller-defined grid_reduce operation with RowBytes 0 and a budget is
// planned (the row costs one byte) instead of dividing by zero; a negative
// byte model is refused by PlanRows and PlanLanes before any division.
func TestPlannerEntryPointsValidateTheOp(t *testing.T) {
	l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{MemoryBudgetBytes: 1 << 16, MinLanesPerDevice: 1})
	free := shard.Op{Key: "free_grid", Class: shard.GridReduce, WarpChunks: true}
	s, err := l.PlanLanes(free, 1<<20, 0, -1)
	require.NoError(t, err)
	assert.Equal(t, 1<<16, s.Plan.ChunkRays)
	free.WarpChunks = false
	_, err = l.PlanLanes(free, 1<<20, 0, -1)
	require.NoError(t, err)

	bad := shard.Op{Key: "bad", RowBytes: -4}
	_, err = l.PlanLanes(bad, 1024, 0, -1)
	require.ErrorIs(t, err, shard.ErrInvalidPlan)
	_, err = l.PlanRows(bad, 1024)
	require.ErrorIs(t, err, shard.ErrInvalidPlan)
	_, err = l.PlanRows(shard.Op{Key: "neg_fixed", FixedBytes: -1}, 8)
	require.ErrorIs(t, err, shard.ErrInvalidPlan)
	_, err = l.PlanRows(shard.IntersectOp(geom.FlagsAll), -1)
	require.ErrorIs(t, err, shard.ErrInvalidPlan)
	require.ErrorIs(t, err, geom.ErrInvalidArgument)
}

// RowShards and LaneShards never divide by weights that fail CheckWeights:
// the first device takes everything.
func TestShardsWithUnusableWeights(t *testing.T) {
	devs := []int{3, 5}
	for _, w := range [][]float64{{0, 0}, {1}, {1, math.NaN()}, {-1, 2}, {math.Inf(1), 1}} {
		require.Error(t, shard.CheckWeights("w", w, 2), "%v", w)
		assert.Equal(t, []shard.Shard{{Device: 3, Start: 0, Stop: 100}}, shard.RowShards(devs, w, 100), "%v", w)
		assert.Equal(t, []shard.Shard{{Device: 3, Start: 10, Stop: 110}}, shard.LaneShards(devs, w, 10, 100), "%v", w)
	}
	require.NoError(t, shard.CheckWeights("w", []float64{1, 3}, 2))
	assert.Nil(t, shard.RowShards(nil, nil, 100))
	assert.Nil(t, shard.LaneShards(devs, []float64{1, 1}, 0, -4))
	assert.Equal(t, []shard.Shard{{Device: 3, Start: 0, Stop: 25}, {Device: 5, Replica: 1, Start: 25, Stop: 100}},
		shard.RowShards(devs, []float64{1, 3}, 100))
}

// ValidateOptions needs no topology: a laptop can refuse bad options and
// device lists before any device is probed, with Plan's errors.
func TestValidateOptions(t *testing.T) {
	require.NoError(t, shard.ValidateOptions(nil, shard.Options{}))
	require.NoError(t, shard.ValidateOptions([]int{0, 1}, shard.Options{Weights: []float64{1, 3}, ChunkRays: 1024}))
	require.NoError(t, shard.ValidateOptions([]int{7}, shard.Options{}), "ordinals are not checked against a device count")
	for _, c := range []struct {
		devices []int
		o       shard.Options
		is      error
		text    string
	}{
		{nil, shard.Options{ChunkRays: 8}, shard.ErrOptionsWithoutDevices, "also requires devices"},
		{[]int{}, shard.Options{}, shard.ErrInvalidDevices, "at least one device"},
		{[]int{1, 1}, shard.Options{}, shard.ErrInvalidDevices, "duplicate devices"},
		{[]int{0, -2}, shard.Options{}, shard.ErrInvalidDevices, "[-2]"},
		{[]int{0, 1}, shard.Options{Weights: []float64{1}}, shard.ErrInvalidOption, "entries but 2 devices"},
		{[]int{0, 1}, shard.Options{Weights: []float64{0, 0}}, shard.ErrInvalidOption, "must not sum to zero"},
		{[]int{0}, shard.Options{PipelineChunksPerDevice: 1}, shard.ErrInvalidOption, "at least 2"},
		{[]int{0, 1}, shard.Options{MemoryBudgetBytes: -1}, shard.ErrInvalidOption, "must be at least 1"},
	} {
		err := shard.ValidateOptions(c.devices, c.o)
		require.ErrorIs(t, err, c.is, "%v %+v", c.devices, c.o)
		assert.Contains(t, err.Error(), c.text)
		assert.False(t, errors.Is(err, shard.ErrNoDevices), "no device probe: never ErrNoDevices")
		// Plan on a two-device topology agrees whenever it gets that far.
		if _, perr := shard.Plan(c.devices, shard.Uniform(2), c.o); perr != nil && len(c.devices) > 0 && c.devices[len(c.devices)-1] >= 0 {
			assert.Equal(t, err.Error(), perr.Error())
		}
	}
}
