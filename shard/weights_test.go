package shard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// test_operation_weights_are_isolated: {intersect:[1,0], visible:[1,3]}.
func TestOperationWeightsAreIsolated(t *testing.T) {
	l, err := shard.Plan([]int{0, 1}, shard.Uniform(2), shard.Options{
		MinRaysPerDevice: 1,
		OperationWeights: map[string][]float64{"intersect": {1, 0}, "visible": {1, 3}},
	})
	require.NoError(t, err)
	for range 2 { // repeatable
		s, err := l.PlanRows(shard.IntersectOp(geom.FlagsAll), 100)
		require.NoError(t, err)
		require.Equal(t, []shard.Shard{{Device: 0, Start: 0, Stop: 100}}, s.Dispatch.Shards)
		require.Equal(t, shard.ModeMaster, s.Dispatch.Mode)
		s, err = l.PlanRows(shard.VisibleOp(), 100)
		require.NoError(t, err)
		require.Equal(t, []shard.Shard{{Device: 0, Start: 0, Stop: 25}, {Device: 1, Replica: 1, Start: 25, Stop: 100}}, s.Dispatch.Shards)
		w, err := l.WeightsFor("nearest_edge")
		require.NoError(t, err)
		require.Equal(t, []float64{1, 1}, w)
	}
}

// §4.1: exact key > family > base; intersect_* share "intersect";
// nearest_edge_ray is its own family.
func TestWeightResolutionOrder(t *testing.T) {
	l, err := shard.Plan([]int{0, 1}, shard.Uniform(2), shard.Options{
		Weights: []float64{2, 1},
		OperationWeights: map[string][]float64{
			"trace_reflections":   {1, 4},
			"trace_reflections:4": {1, 9},
			"intersect":           {5, 1},
			"nearest_edge":        {7, 1},
		},
	})
	require.NoError(t, err)
	for op, want := range map[string][]float64{
		"":                    {2, 1},
		"trace_reflections:4": {1, 9},
		"trace_reflections:1": {1, 4},
		"trace_reflections":   {1, 4},
		"intersect_full":      {5, 1},
		"intersect_reduced":   {5, 1},
		"nearest_edge":        {7, 1},
		"nearest_edge_ray":    {2, 1},
		"nearest_edges:3":     {2, 1},
		"visible":             {2, 1},
	} {
		got, err := l.WeightsFor(op)
		require.NoError(t, err, op)
		require.Equal(t, want, got, op)
	}
	// §13 row 65: a blank operation name.
	_, err = l.WeightsFor("  ")
	require.ErrorIs(t, err, shard.ErrInvalidOption)
}

// test_calibration_updates_only_the_named_operation and §4.1: a stored
// result replaces only its exact key and becomes the latest weights.
func TestCalibrationUpdatesOnlyTheNamedOperation(t *testing.T) {
	l, err := shard.Plan([]int{0, 1}, shard.Uniform(2), shard.Options{})
	require.NoError(t, err)
	require.NoError(t, l.SetOperationWeights("intersect_full", []float64{1.002, 0.998}))
	require.Equal(t, []float64{1.002, 0.998}, l.DeviceWeights())
	for op, want := range map[string][]float64{
		"intersect_full": {1.002, 0.998}, "intersect_reduced": {1, 1}, "nearest_edge": {1, 1}, "visible": {1, 1},
	} {
		got, err := l.WeightsFor(op)
		require.NoError(t, err)
		require.Equal(t, want, got, op)
	}
	require.NoError(t, l.SetOperationWeights("visible", []float64{1, 0}))
	got, _ := l.WeightsFor("visible")
	require.Equal(t, []float64{1, 0}, got)
	got, _ = l.WeightsFor("intersect_full")
	require.Equal(t, []float64{1.002, 0.998}, got)
	require.ErrorIs(t, l.SetOperationWeights("visible", []float64{0, 0}), shard.ErrInvalidOption)
	require.ErrorIs(t, l.SetOperationWeights("", []float64{1, 1}), shard.ErrInvalidOption)
}

// test_the_measured_weights_survive_a_rebuild_of_the_replicas.
func TestMeasuredWeightsSurviveARebuild(t *testing.T) {
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{})
	require.NoError(t, l.SetOperationWeights("trace_reflections:4", []float64{1, 0.25}))
	require.NoError(t, l.Build(t.Context(), c.Builder(0, fixtureMeshes())))
	got, err := l.WeightsFor("trace_reflections:4")
	require.NoError(t, err)
	require.Equal(t, []float64{1, 0.25}, got)
	require.Equal(t, []float64{1, 0.25}, l.DeviceWeights())
}
