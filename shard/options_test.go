package shard_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/shard"
)

// test_options_defaults_are_the_documented_ones
func TestOptionsDefaultsAreTheDocumentedOnes(t *testing.T) {
	require.Equal(t, 4, shard.DefaultPipelineChunksPerDevice)
	require.Equal(t, 262144, shard.DefaultMinRaysPerDevice)
	require.Equal(t, 262144, shard.DefaultMinLanesPerDevice)
	l, err := shard.Plan([]int{0, 1}, shard.Uniform(2), shard.Options{})
	require.NoError(t, err)
	o := l.Options()
	require.Equal(t, 4, o.PipelineChunksPerDevice)
	require.Equal(t, 262144, o.MinRaysPerDevice)
	require.Equal(t, 262144, o.MinLanesPerDevice)
	require.False(t, o.AllowNoPeerAccess || o.AllowHeterogeneous || o.SkipWarmUp || o.DisablePipeline)
	require.Zero(t, o.ChunkRays)
	require.Zero(t, o.MemoryBudgetBytes)
	require.Nil(t, o.Offload)
	require.True(t, l.Pipelined())
	require.False(t, l.Chunked(), "the option defaults leave chunking off")
	require.Equal(t, []float64{1, 1}, l.DeviceWeights())
	require.Equal(t, 0, l.Master())
	require.Nil(t, l.LastDispatch())
	require.Nil(t, l.LastChunkPlan())
}

// test_device_and_option_arguments_are_validated, test_the_throughput_knobs_are_validated,
// test_the_chunking_knobs_are_validated and §13 rows 1, 5-8, 10-12, 14, 15, 17, 20.
func TestPlanValidation(t *testing.T) {
	cases := []struct {
		name    string
		devices []int
		count   int
		o       shard.Options
		is      error
		field   string // substring of the message
	}{
		{"options without devices", nil, 2, shard.Options{ChunkRays: 8}, shard.ErrOptionsWithoutDevices, "also requires devices"},
		{"empty list", []int{}, 2, shard.Options{}, shard.ErrInvalidDevices, "at least one device"},
		{"duplicates", []int{0, 1, 0, 1}, 2, shard.Options{}, shard.ErrInvalidDevices, "duplicate devices [0 1]"},
		{"no device visible", []int{0}, 0, shard.Options{}, shard.ErrNoDevices, "needs CUDA"},
		{"out of range", []int{0, 2}, 2, shard.Options{}, shard.ErrInvalidDevices, "2 CUDA device(s) are visible"},
		{"negative ordinal", []int{-1}, 2, shard.Options{}, shard.ErrInvalidDevices, "[-1]"},
		{"weights length", []int{0}, 1, shard.Options{Weights: []float64{1, 1}, ChunkRays: 1}, shard.ErrInvalidOption, "Weights: has 2 entries but 1 devices"},
		{"weight zero sum", []int{0}, 1, shard.Options{Weights: []float64{0}}, shard.ErrInvalidOption, "must not sum to zero"},
		{"weight negative", []int{0}, 1, shard.Options{Weights: []float64{-1}}, shard.ErrInvalidOption, "finite and non-negative"},
		{"weight NaN", []int{0, 1}, 2, shard.Options{Weights: []float64{1, math.NaN()}}, shard.ErrInvalidOption, "finite and non-negative"},
		{"weight Inf", []int{0, 1}, 2, shard.Options{Weights: []float64{math.Inf(1), 1}}, shard.ErrInvalidOption, "finite and non-negative"},
		{"operation key blank", []int{0, 1}, 2, shard.Options{OperationWeights: map[string][]float64{" ": {1, 1}}}, shard.ErrInvalidOption, "non-empty strings"},
		{"operation value", []int{0, 1}, 2, shard.Options{OperationWeights: map[string][]float64{"visible": {1}}}, shard.ErrInvalidOption, `OperationWeights["visible"]: has 1 entries`},
		{"chunk negative", []int{0}, 1, shard.Options{ChunkRays: -4}, shard.ErrInvalidOption, "ChunkRays: must be at least 1"},
		{"budget negative", []int{0}, 1, shard.Options{MemoryBudgetBytes: -1}, shard.ErrInvalidOption, "MemoryBudgetBytes: must be at least 1"},
		{"chunks per device 1", []int{0}, 1, shard.Options{PipelineChunksPerDevice: 1}, shard.ErrInvalidOption, "at least 2"},
		{"chunks per device negative", []int{0}, 1, shard.Options{PipelineChunksPerDevice: -2}, shard.ErrInvalidOption, "PipelineChunksPerDevice: must be at least 1"},
		{"min rays negative", []int{0}, 1, shard.Options{MinRaysPerDevice: -1}, shard.ErrInvalidOption, "MinRaysPerDevice"},
		{"min lanes negative", []int{0}, 1, shard.Options{MinLanesPerDevice: -1}, shard.ErrInvalidOption, "MinLanesPerDevice"},
		// First failure wins: the device list is checked before the options,
		// the weights before the chunking knobs, those before the pipeline.
		{"devices before options", []int{}, 2, shard.Options{ChunkRays: -1}, shard.ErrInvalidDevices, "at least one device"},
		{"duplicates before no device", []int{3, 3}, 0, shard.Options{}, shard.ErrInvalidDevices, "duplicate"},
		{"weights before chunks", []int{0}, 1, shard.Options{Weights: []float64{0}, ChunkRays: -1}, shard.ErrInvalidOption, "Weights"},
		{"chunks before pipeline", []int{0}, 1, shard.Options{ChunkRays: -1, PipelineChunksPerDevice: 1}, shard.ErrInvalidOption, "ChunkRays"},
		{"options before topology", []int{0, 1}, 2, shard.Options{MinLanesPerDevice: -1}, shard.ErrInvalidOption, "MinLanesPerDevice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// No peer access anywhere: the topology check must come last.
			topo := simdev.New(simdev.Config{Devices: c.count, NoPeer: [][2]int{{0, 1}, {1, 0}}})
			l, err := shard.Plan(c.devices, topo, c.o)
			require.Nil(t, l)
			require.ErrorIs(t, err, c.is)
			require.Contains(t, err.Error(), c.field)
			switch {
			case errors.Is(err, shard.ErrInvalidOption):
				var oe *shard.OptionError
				require.ErrorAs(t, err, &oe)
				require.NotEmpty(t, oe.Field)
			case errors.Is(err, shard.ErrInvalidDevices):
				var de *shard.DeviceError
				require.ErrorAs(t, err, &de)
			}
		})
	}
}

// §1.4: who gets a layer. test_a_scene_that_asks_for_nothing_keeps_the_single_device_path,
// test_any_chunking_knob_engages_the_layer_on_one_device.
func TestWhoGetsALayer(t *testing.T) {
	topo := shard.Uniform(2)
	l, err := shard.Plan(nil, topo, shard.Options{})
	require.NoError(t, err)
	require.Nil(t, l, "no devices and no options: no layer")
	for _, o := range []shard.Options{{}, {SkipWarmUp: true}, {Weights: []float64{3}}, {DisablePipeline: true}, {MinRaysPerDevice: 5}} {
		l, err := shard.Plan([]int{1}, topo, o)
		require.NoError(t, err)
		require.Nil(t, l, "one device without a chunking knob takes the single-device path: %+v", o)
	}
	hook := func(int, any) error { return nil }
	for _, o := range []shard.Options{{ChunkRays: 8}, {MemoryBudgetBytes: 1 << 20}, {Offload: hook}} {
		l, err := shard.Plan([]int{1}, topo, o)
		require.NoError(t, err)
		require.NotNil(t, l)
		require.True(t, l.Chunked())
		require.False(t, l.Pipelined())
		require.Equal(t, []float64{1}, l.DeviceWeights())
	}
	l, err = shard.Plan([]int{1, 0}, topo, shard.Options{})
	require.NoError(t, err)
	require.True(t, l.Pipelined())
	require.False(t, l.Chunked())
	require.Equal(t, 1, l.Master())
	l, err = shard.Plan([]int{0, 1}, topo, shard.Options{DisablePipeline: true})
	require.NoError(t, err)
	require.False(t, l.Pipelined())
}

// test_peer_access_is_required_by_default, test_the_caller_can_explicitly_accept_a_non_peer_link,
// test_heterogeneous_devices_are_an_explicit_opt_in; §13 rows 22 and 23.
func TestTopologyChecks(t *testing.T) {
	oneWay := simdev.New(simdev.Config{Devices: 3, NoPeer: [][2]int{{2, 0}}})
	_, err := shard.Plan([]int{0, 1, 2}, oneWay, shard.Options{})
	require.ErrorIs(t, err, shard.ErrNoPeerAccess)
	var te *shard.TopologyError
	require.ErrorAs(t, err, &te)
	require.Equal(t, []int{2}, te.Missing)
	require.Contains(t, err.Error(), "peer access")
	l, err := shard.Plan([]int{0, 1, 2}, oneWay, shard.Options{AllowNoPeerAccess: true})
	require.NoError(t, err)
	require.NotNil(t, l)
	_, err = shard.Plan([]int{0, 1}, oneWay, shard.Options{})
	require.NoError(t, err, "only pairs with the master matter")

	mixed := simdev.New(simdev.Config{Devices: 2, Identities: []shard.Identity{{Name: "GPU A", Major: 9}, {Name: "GPU B", Major: 8, Minor: 6}}})
	_, err = shard.Plan([]int{0, 1}, mixed, shard.Options{})
	require.ErrorIs(t, err, shard.ErrHeterogeneous)
	require.Contains(t, err.Error(), "cuda:0=GPU A (sm_90), cuda:1=GPU B (sm_86)")
	require.Contains(t, err.Error(), "identical GPU model and compute capability")
	l, err = shard.Plan([]int{0, 1}, mixed, shard.Options{AllowHeterogeneous: true})
	require.NoError(t, err)
	require.NotNil(t, l)
	l, err = shard.Plan([]int{1}, mixed, shard.Options{})
	require.NoError(t, err, "a single device is never checked")
	require.Nil(t, l)
}

// Options are copied: later edits of the caller's slices and map change
// nothing.
func TestOptionsAreCopied(t *testing.T) {
	w := []float64{1, 3}
	ow := map[string][]float64{"visible": {1, 0}}
	l, err := shard.Plan([]int{0, 1}, shard.Uniform(2), shard.Options{Weights: w, OperationWeights: ow})
	require.NoError(t, err)
	w[0] = 100
	ow["visible"][1] = 100
	ow["intersect"] = []float64{0, 1}
	got, err := l.WeightsFor("visible")
	require.NoError(t, err)
	require.Equal(t, []float64{1, 0}, got)
	got, err = l.WeightsFor("intersect_full")
	require.NoError(t, err)
	require.Equal(t, []float64{1, 3}, got)
}

func TestOffloadAs(t *testing.T) {
	var seen []int
	hook := shard.OffloadAs(func(start int, v []bool) error { seen = append(seen, start, len(v)); return nil })
	require.NoError(t, hook(4, []bool{true, false}))
	require.Equal(t, []int{4, 2}, seen)
	require.ErrorContains(t, hook(0, 3), "expects []bool, got int")
}
