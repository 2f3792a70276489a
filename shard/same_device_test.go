package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/shard"
)

// A device named twice is refused by default and accepted with
// AllowSameDevice: each position gets its own replica, the later ones are
// driven as remotes, and results equal the reference bit for bit.
func TestSameDeviceReplicas(t *testing.T) {
	_, err := shard.Plan([]int{0, 0}, shard.Uniform(1), shard.Options{})
	require.ErrorIs(t, err, shard.ErrInvalidDevices)

	l, c := newLayer(t, 1, []int{0, 0, 0}, shard.Options{AllowSameDevice: true, MinRaysPerDevice: 1})
	require.Equal(t, []int{0, 0, 0}, l.Devices())
	reps, err := l.Replicas()
	require.NoError(t, err)
	require.Len(t, reps, 3)
	require.NotSame(t, reps[0], reps[1])
	require.NotSame(t, reps[1], reps[2])

	b := newBatch(999, 11)
	checkAllOps(t, l, reference(t), b)
	d := l.LastDispatch()
	require.Equal(t, shard.ModePipelined, d.Mode)
	require.Len(t, d.Shards, 3)
	for i, sh := range d.Shards {
		require.Equal(t, 0, sh.Device)
		require.Equal(t, i, sh.Replica)
	}
	st := c.Stats(0)
	require.Positive(t, st.Gathers, "the remotes' rows come back through gathers")

	// A calibration view over the same replicas borrows each slot's own.
	view, err := shard.Plan(l.Devices(), c, shard.Options{AllowSameDevice: true, Weights: []float64{1, 1, 0}, MinRaysPerDevice: 1})
	require.NoError(t, err)
	require.NoError(t, view.Build(context.Background(), shard.Borrow(reps)))
	got, err := view.Replicas()
	require.NoError(t, err)
	for i := range reps {
		require.Same(t, reps[i], shard.Unwrap(got[i]))
	}
	require.NoError(t, view.Close())
}
