package shard_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// LanesOnMaster answers true (and records the master dispatch) exactly when
// the plan keeps every lane on the master, and never launches anything.
func TestLanesOnMasterRecordsTheMasterDispatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	f := newRFFixture(t, r, 4096, 64, 4)
	for _, c := range []struct {
		name   string
		o      shard.Options
		master bool
	}{
		{"weights [1 0]", shard.Options{Weights: []float64{1, 0}}, true},
		{"below the lane floor", shard.Options{}, true},
		{"sharded", shard.Options{MinLanesPerDevice: 32}, false},
		{"chunked", shard.Options{Weights: []float64{1, 0}, ChunkRays: 512}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, cl := newLayer(t, 2, []int{0, 1}, c.o)
			rep, ok, err := shard.LanesOnMaster[*rf.AccumResult](l, f.direct())
			require.NoError(t, err)
			require.Equal(t, c.master, ok)
			for _, dev := range []int{0, 1} {
				require.Zero(t, cl.Stats(dev).Launches+cl.Stats(dev).Replicates, "cuda:%d was used", dev)
			}
			if !ok {
				require.Nil(t, rep)
				return
			}
			require.Equal(t, 0, rep.Device())
			require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
			require.Equal(t, shard.OpAccumDfrDirect, l.LastDispatch().Operation)
		})
	}
}

// RowsOnMaster: true exactly for a master dispatch, nothing launched.
func TestRowsOnMasterRecordsTheMasterDispatch(t *testing.T) {
	b := newBatch(3000, 9)
	for _, c := range []struct {
		name   string
		o      shard.Options
		master bool
	}{
		{"weights [1 0]", shard.Options{Weights: []float64{1, 0}}, true},
		{"below the floor", shard.Options{}, true},
		{"pipelined", shard.Options{MinRaysPerDevice: 16}, false},
		{"chunked", shard.Options{Weights: []float64{1, 0}, ChunkRays: 512}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, cl := newLayer(t, 2, []int{0, 1}, c.o)
			rep, ok, err := shard.RowsOnMaster(l, intersectTask(b, geom.FlagsAll))
			require.NoError(t, err)
			require.Equal(t, c.master, ok)
			for _, dev := range []int{0, 1} {
				require.Zero(t, cl.Stats(dev).Launches, "cuda:%d was used", dev)
			}
			if ok {
				require.Equal(t, 0, rep.Device())
				require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
			}
		})
	}
}

// A borrowed replica unwraps to its owner's; Close leaves it open.
func TestBorrowUnwrapsAndDoesNotClose(t *testing.T) {
	l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{})
	reps, err := l.Replicas()
	require.NoError(t, err)
	b, err := shard.Borrow(reps)(context.Background(), shard.Slot{Index: 1, Device: 1})
	require.NoError(t, err)
	require.NotEqual(t, reps[1], b)
	require.Equal(t, reps[1], shard.Unwrap(b))
	require.Equal(t, reps[0], shard.Unwrap(reps[0]))
	require.NoError(t, b.Close())
	_, err = shard.Borrow(reps)(context.Background(), shard.Slot{Index: 7, Device: 7})
	require.Error(t, err)
	got, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(100, 3), geom.FlagsNone))
	require.NoError(t, err, "the owner's replica is still open")
	require.Len(t, got.T, 100)
}
