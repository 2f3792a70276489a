package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/shard"
)

func runToy(t *testing.T, l *shard.Layer, toy *toyGrid) *toyResult {
	t.Helper()
	r, err := shard.RunLanes[*toyResult](context.Background(), l, toy)
	require.NoError(t, err)
	return r
}

func requireToyEqual(t *testing.T, want, got *toyResult) {
	t.Helper()
	require.Equal(t, bits32(want.Power), bits32(got.Power))
	require.Equal(t, want.Hits, got.Hits)
	require.Equal(t, want.Lanes, got.Lanes)
	require.Equal(t, want.LaneSum, got.LaneSum)
}

// test_two_device_accum_matches_single_device_at_several_weightings (and on
// 4 and 8 devices), test_the_lane_windows_partition_the_caller_s_window.
func TestLaneShardsMatchOneLaunch(t *testing.T) {
	s := reference(t)
	for _, devices := range [][]int{{0, 1}, {0, 1, 2, 3}, {7, 6, 5, 4, 3, 2, 1, 0}} {
		for _, w := range [][]float64{nil, {3, 1}, {1, 0}, {0, 1}} {
			if w != nil && len(devices) > 2 {
				w = append(append([]float64{}, w...), make([]float64, len(devices)-2)...)
				w[len(w)-1] = 1
			}
			t.Run(fmt.Sprint(devices, w), func(t *testing.T) {
				l, c := newLayer(t, 8, devices, shard.Options{MinLanesPerDevice: 1, Weights: w})
				toy := &toyGrid{total: 8192, count: -1, cells: 16, seed: 17, exact: true}
				requireToyEqual(t, toy.single(s), runToy(t, l, toy))
				d := l.LastDispatch()
				require.Equal(t, "grid_reduce", d.Class)
				next := 0
				for i, w := range d.Shards {
					require.Equal(t, next, w.Start)
					if i < len(d.Shards)-1 {
						require.Zero(t, w.Stop%32)
					}
					next = w.Stop
				}
				require.Equal(t, 8192, next)
				launched := 0
				for _, dev := range devices {
					launched += c.Stats(dev).RowsLaunched
				}
				require.Equal(t, 8192, launched, "every lane ran exactly once")
			})
		}
	}
}

// test_a_caller_lane_window_is_sharded_inside_itself and
// test_a_fixed_split_merges_in_a_fixed_order.
func TestCallerLaneWindows(t *testing.T) {
	s := reference(t)
	l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, Weights: []float64{3, 1}})
	whole := &toyGrid{total: 8192, count: -1, cells: 16, seed: 3, exact: true}
	lo := &toyGrid{total: 8192, offset: 0, count: 4096, cells: 16, seed: 3, exact: true}
	hi := &toyGrid{total: 8192, offset: 4096, count: -1, cells: 16, seed: 3, exact: true}
	a, b := runToy(t, l, lo), runToy(t, l, hi)
	require.Equal(t, []shard.Shard{sh(0, 4096, 4096+3072), sh(1, 4096+3072, 8192)}, l.LastDispatch().Shards)
	merged, err := whole.Add(a, b)
	require.NoError(t, err)
	requireToyEqual(t, whole.single(s), merged.(*toyResult))
	for _, bad := range []*toyGrid{
		{total: 8192, offset: 8193, count: -1, cells: 16},
		{total: 8192, offset: 1, count: 8192, cells: 16},
		{total: 8192, offset: -1, count: 8, cells: 16},
	} {
		_, err := shard.RunLanes[*toyResult](context.Background(), l, bad)
		require.ErrorIs(t, err, shard.ErrLaneWindow)
	}
	// A float grid merged in a fixed order reproduces bit for bit, and
	// stays close to the single launch.
	inexact := &toyGrid{total: 8192, count: -1, cells: 16, seed: 5}
	first, second := runToy(t, l, inexact), runToy(t, l, inexact)
	requireToyEqual(t, first, second)
	want := inexact.single(s)
	require.Equal(t, want.Hits, first.Hits)
	require.InDeltaSlice(t, want.Power, first.Power, 1e-2)
}

// test_chunked_two_device_accum_matches_and_reproduces,
// test_a_chunk_size_is_rounded_up_to_a_whole_warp,
// test_chunked_one_device_accumulation_matches_the_unchunked_scene.
func TestLaneChunks(t *testing.T) {
	s := reference(t)
	toy := &toyGrid{total: 8192, count: -1, cells: 16, seed: 17, exact: true}
	l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{ChunkRays: 2048})
	requireToyEqual(t, toy.single(s), runToy(t, l, toy))
	p := l.LastChunkPlan()
	require.Equal(t, "toy_grid", p.Operation)
	require.Equal(t, [2]int{2048, 4}, [2]int{p.ChunkRays, p.ChunkCount})
	require.Equal(t, shard.ModeLaneChunked, l.LastDispatch().Mode)
	require.Nil(t, p.MeasuredRowBytes)

	l, _ = newLayer(t, 2, []int{0, 1}, shard.Options{ChunkRays: 100, MinLanesPerDevice: 1})
	toy = &toyGrid{total: 1024, count: -1, cells: 16, seed: 1, exact: true}
	requireToyEqual(t, toy.single(s), runToy(t, l, toy))
	require.Equal(t, [2]int{128, 8}, [2]int{l.LastChunkPlan().ChunkRays, l.LastChunkPlan().ChunkCount})

	l, c := newLayer(t, 1, []int{0}, shard.Options{ChunkRays: 2048})
	toy = &toyGrid{total: 8192, count: -1, cells: 16, seed: 2, exact: true}
	requireToyEqual(t, toy.single(s), runToy(t, l, toy))
	require.Equal(t, 4, l.LastChunkPlan().ChunkCount)
	require.Equal(t, 4, c.Stats(0).Launches)
}

// The small-window rules of §7.1: test_a_window_narrower_than_a_warp_runs_on_one_device,
// test_an_empty_lane_space_runs_once_on_the_master, test_small_grid_reduce_window_runs_on_the_master,
// test_grid_reduce_master_only_weight_never_launches_a_remote.
func TestSmallLaneWindows(t *testing.T) {
	s := reference(t)
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1})
	toy := &toyGrid{total: 16, count: -1, cells: 16, seed: 4, exact: true}
	requireToyEqual(t, toy.single(s), runToy(t, l, toy))
	require.Equal(t, []shard.Shard{sh(1, 0, 16)}, l.LastDispatch().Shards)

	c.ResetStats()
	empty := &toyGrid{total: 0, count: -1, cells: 16, seed: 4, exact: true}
	got := runToy(t, l, empty)
	require.Zero(t, got.Lanes)
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	require.Equal(t, 1, l.LastChunkPlan().ChunkCount)
	require.Equal(t, 1, c.Stats(0).Launches)
	require.Zero(t, c.Stats(1).Launches)

	l, c = newLayer(t, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 128})
	toy = &toyGrid{total: 64, count: -1, cells: 16, seed: 4, exact: true}
	requireToyEqual(t, toy.single(s), runToy(t, l, toy))
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	require.Equal(t, []simdev.Step{{Device: 0, Stage: "launch", Start: 0, Stop: 64}}, launches(c.Log()))

	l, c = newLayer(t, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, Weights: []float64{1, 0}})
	toy = &toyGrid{total: 4096, count: -1, cells: 16, seed: 4, exact: true}
	requireToyEqual(t, toy.single(s), runToy(t, l, toy))
	require.Zero(t, c.Stats(1).Enters+c.Stats(1).Launches+c.Stats(1).Replicates)

	// The lane floor plus an operation's own extra.
	l, _ = newLayer(t, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 2000})
	op := toyOp()
	sched, err := l.PlanLanes(op, 4096, 0, -1)
	require.NoError(t, err)
	require.Equal(t, shard.ModeLaneSharded, sched.Dispatch.Mode)
	op.LaneFloorExtra = 49
	sched, err = l.PlanLanes(op, 4096, 0, -1)
	require.NoError(t, err)
	require.Equal(t, shard.ModeMaster, sched.Dispatch.Mode)
	require.Equal(t, 2049, sched.Dispatch.Floor)
}

func launches(steps []simdev.Step) []simdev.Step {
	var out []simdev.Step
	for _, s := range steps {
		if s.Stage == "launch" {
			out = append(out, s)
		}
	}
	return out
}

// test_cuda_grid_reduce_never_creates_a_nonzero_offset_shard,
// test_cuda_grid_reduce_rejects_chunking_that_would_need_an_offset, §13
// rows 41 and 44.
func TestZeroOffsetOnlyBackend(t *testing.T) {
	s := reference(t)
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1})
	toy := &toyGrid{total: 4096, count: -1, cells: 16, seed: 6, exact: true, zeroOffsetOnly: true}
	requireToyEqual(t, toy.single(s), runToy(t, l, toy))
	require.Equal(t, []simdev.Step{{Device: 0, Stage: "launch", Start: 0, Stop: 4096}}, launches(c.Log()))
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	// A window at a non-zero offset reaches the master, which refuses it.
	_, err := shard.RunLanes[*toyResult](context.Background(), l, &toyGrid{total: 4096, offset: 64, count: -1, cells: 16, zeroOffsetOnly: true})
	require.ErrorContains(t, err, "requires the OptiX trace backend")
	require.ErrorIs(t, err, shard.ErrReplica)
	require.NoError(t, l.Poisoned())

	l, c = newLayer(t, 2, []int{0, 1}, shard.Options{ChunkRays: 32})
	_, err = shard.RunLanes[*toyResult](context.Background(), l, &toyGrid{total: 64, count: -1, cells: 16, zeroOffsetOnly: true})
	require.ErrorIs(t, err, shard.ErrUnsupported)
	require.ErrorContains(t, err, "CUDA trace backend cannot split a lane window") // §13 row 41
	require.Empty(t, c.Log(), "nothing was launched")
}

// test_lane_budget_aligns_down_without_exceeding_the_limit,
// test_lane_budget_rejects_less_than_one_safe_warp,
// test_requested_lane_chunk_is_rechecked_after_alignment; §13 rows 39, 40.
func TestLaneBudget(t *testing.T) {
	op := toyOp()
	fixed := op.FixedBytes
	plan := func(o shard.Options) (*shard.Schedule, error) {
		l, err := shard.Plan([]int{0, 1}, shard.Uniform(2), o)
		require.NoError(t, err)
		return l.PlanLanes(op, 1024, 0, -1)
	}
	for affordable, want := range map[int64]int{33: 32, 63: 32, 64: 64} {
		s, err := plan(shard.Options{MemoryBudgetBytes: fixed + affordable*21})
		require.NoError(t, err)
		require.Equal(t, want, s.Plan.ChunkRays, "affordable %d", affordable)
		require.Equal(t, shard.SourceBudget, s.Plan.Source)
		require.Equal(t, fixed, s.Plan.FixedOutputBytes)
		require.LessOrEqual(t, fixed+int64(s.Plan.ChunkRays)*21, fixed+affordable*21)
	}
	_, err := plan(shard.Options{MemoryBudgetBytes: fixed + 31*21})
	require.ErrorIs(t, err, shard.ErrBudget)
	require.ErrorContains(t, err, "cannot hold one warp-aligned lane chunk")
	_, err = plan(shard.Options{MemoryBudgetBytes: fixed + 33*21, ChunkRays: 33})
	require.ErrorIs(t, err, shard.ErrBudget)
	require.ErrorContains(t, err, "warp-aligned lane chunk requires an estimated") // §13 row 40
	// A run refuses before any launch.
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MemoryBudgetBytes: fixed + 31*21})
	_, err = shard.RunLanes[*toyResult](context.Background(), l, &toyGrid{total: 1024, count: -1, cells: 16})
	require.ErrorIs(t, err, shard.ErrBudget)
	require.Empty(t, c.Log())
}

// Cancellation of a grid_reduce call at a chunk boundary.
func TestLaneCancellation(t *testing.T) {
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{ChunkRays: 64})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := shard.RunLanes[*toyResult](ctx, l, &toyGrid{total: 1024, count: -1, cells: 16})
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, c.Stats(0).Launches+c.Stats(1).Launches)
	require.Equal(t, c.Stats(0).Enters, c.Stats(0).Exits)
	require.NoError(t, l.Poisoned())
}

// §15.6: grid_reduce operations ignore Offload (it only engages the layer).
func TestLaneTasksIgnoreOffload(t *testing.T) {
	called := false
	l, _ := newLayer(t, 1, []int{0}, shard.Options{Offload: func(int, any) error { called = true; return nil }})
	toy := &toyGrid{total: 512, count: -1, cells: 16, seed: 8, exact: true}
	got := runToy(t, l, toy)
	requireToyEqual(t, toy.single(reference(t)), got)
	require.False(t, called)
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
}
