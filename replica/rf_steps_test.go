package replica

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The RF tasks of package shard are recognised, anything else is left to
// the per_ray jobs.
func TestRFJobOf(t *testing.T) {
	for _, tc := range []struct {
		task shard.Task
		key  string
	}{
		{&shard.AccumDfrDirect{}, shard.OpAccumDfrDirect},
		{&shard.AccumDfrCoherentDirect{}, shard.OpAccumDfrCoherentDirect},
		{&shard.AccumulateReflections{}, shard.OpAccumulateReflections},
		{&shard.TraceDfrPaths{}, shard.OpTraceDfrPaths},
	} {
		j, ok := rfJobOf(tc.task)
		require.True(t, ok, tc.key)
		require.Equal(t, tc.key, j.key())
	}
	for _, task := range []shard.Task{&shard.Intersect{}, &shard.Visible{}, (*shard.AccumDfrDirect)(nil), nil} {
		_, ok := rfJobOf(task)
		require.False(t, ok, "%T", task)
	}
}

// The output buffers of one partial (or path block).
func TestRFOutShape(t *testing.T) {
	g := rf.DfrGrid{Res0: 3, Res1: 5}
	ag := rf.AccumGrid{Res0: 3, Res1: 5}
	shape := func(j *rfJob, txs int) [3]int {
		a, b, c := j.outShape(txs)
		return [3]int{a, b, c}
	}
	require.Equal(t, [3]int{7 * 15, 7, 0}, shape(&rfJob{direct: &shard.AccumDfrDirect{Grid: g}}, 0))
	require.Equal(t, [3]int{12 * 15, 3 * 15, 0}, shape(&rfJob{coherent: &shard.AccumDfrCoherentDirect{Grid: g}}, 0))
	refl := &shard.AccumulateReflections{Grid: ag}
	require.Equal(t, [3]int{7 * 15, 2, 0}, shape(&rfJob{refl: refl}, 0))
	refl.Options.CollectWedges, refl.Options.WedgeCapacity = true, 9
	require.Equal(t, [3]int{7 * 15, 2, 9 * accel.WedgeEventWords}, shape(&rfJob{refl: refl}, 0))
	paths := &shard.TraceDfrPaths{Rx: make([]float32, 3*4), States: &rf.DfrStates{EdgeIndex: make([]int32, 5)}}
	require.Equal(t, [3]int{0, 1, 6 * 4 * 5 * accel.PathRowWords}, shape(&rfJob{paths: paths}, 6))
}

// Host partials merge with package shard's merges, in order; mismatched
// results are refused.
func TestRFMergeRF(t *testing.T) {
	a := &rf.AccumResult{Res0: 1, Res1: 1, DirectCount: 2}
	b := &rf.AccumResult{Res0: 1, Res1: 1, DirectCount: 3}
	for _, r := range []*rf.AccumResult{a, b} {
		for _, g := range []*[]float64{&r.Power, &r.FieldXRe, &r.FieldXIm, &r.FieldYRe, &r.FieldYIm, &r.FieldZRe, &r.FieldZIm} {
			*g = []float64{1}
		}
	}
	require.NoError(t, mergeRF(a, b))
	require.Equal(t, int32(5), a.DirectCount)
	require.Equal(t, []float64{2}, a.Power)
	require.Error(t, mergeRF(a, &rf.CoherentResult{}))
	require.ErrorIs(t, mergeRF(&rf.ReflResult{Wedges: rf.WedgeEvents{Capacity: 1}}, &rf.ReflResult{}), shard.ErrIncompatiblePartials)
}

// Payload releases are idempotent and free nothing they do not own.
func TestRFPayloadReleases(t *testing.T) {
	(&rfHost{v: 1}).Release()
	o := &rfOut{}
	o.Release()
	o.Release()
	in := &rfInputs{}
	in.Release()
	in.Release()
	require.True(t, in.released.Load())
	_, err := rfInputsOf(in, nil)
	require.ErrorContains(t, err, "after release")
	_, err = rfInputsOf(&rfHost{}, nil)
	require.Error(t, err)
}
