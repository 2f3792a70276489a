package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/shard"
)

// test_every_covered_op_matches_single_device_at_several_weightings,
// test_the_pipelined_result_is_the_unpipelined_result_bitwise and the §13
// per_ray matrix (intersect full and flags=0, trace_reflections B=1 and
// B=4, visible): every mode, weighting and batch size below and above the
// floor, odd sizes included, is bitwise the single ref.Scene.
func TestShardedIsSingleBitwise(t *testing.T) {
	s := reference(t)
	modes := map[string]shard.Options{
		"pipelined":   {MinRaysPerDevice: 16},
		"pipelined32": {MinRaysPerDevice: 1, PipelineChunksPerDevice: 32},
		"sharded":     {MinRaysPerDevice: 16, DisablePipeline: true},
		"chunked":     {ChunkRays: 7},
	}
	for name, o := range modes {
		for _, w := range [][]float64{nil, {9, 1}, {1, 3}, {1, 0}, {0, 1}} {
			o := o
			o.Weights = w
			l, _ := newLayer(t, 2, []int{0, 1}, o)
			for _, n := range []int{0, 1, 31, 33, 257, 1500} {
				t.Run(fmt.Sprintf("%s/%v/%d", name, w, n), func(t *testing.T) {
					checkAllOps(t, l, s, newBatch(n, uint64(n)))
				})
			}
		}
	}
}

// The dispatch each mode recorded, and the shards it ran, for the
// intersect of the matrix above (§4.2 examples through the executor).
func TestDispatchIsRecorded(t *testing.T) {
	b := newBatch(33, 2)
	run := func(o shard.Options) (*shard.Layer, *simdev.Cluster) {
		l, c := newLayer(t, 2, []int{0, 1}, o)
		_, err := shard.RunRows(context.Background(), l, intersectTask(b, geom.FlagsAll))
		require.NoError(t, err)
		return l, c
	}
	// test_a_small_batch_is_bitwise_the_master_only_result: the default floor.
	l, c := run(shard.Options{})
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	require.Nil(t, l.LastChunkPlan())
	require.Zero(t, c.Stats(1).Enters+c.Stats(1).Launches, "the remote is untouched")
	require.Equal(t, 1, c.Stats(0).Launches)
	require.Zero(t, c.Stats(0).BytesIn, "the master call uses the caller's memory")
	// test_default_options_warm_up_and_still_match: pipelined above the floor.
	l, c = run(shard.Options{MinRaysPerDevice: 1})
	require.Equal(t, shard.ModePipelined, l.LastDispatch().Mode)
	require.Equal(t, []shard.Shard{sh(0, 0, 16), sh(1, 16, 33)}, l.LastDispatch().Shards)
	require.Equal(t, 1, c.Stats(0).Launches)
	require.Equal(t, 4, c.Stats(1).Launches)
	require.Equal(t, int64(17*(24+4+1)), c.Stats(1).BytesIn, "o, d, tmax and active of 17 rows")
	require.Equal(t, int64(17*76), c.Stats(1).BytesOut)
	p := l.LastChunkPlan()
	require.NotNil(t, p.MeasuredRowBytes)
	require.Equal(t, 76, *p.MeasuredRowBytes)
	// test_a_degenerate_split_is_dispatched_as_a_single_device_call.
	l, c = run(shard.Options{MinRaysPerDevice: 1, Weights: []float64{1, 0}})
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	require.Zero(t, c.Stats(1).Launches)
	l, _ = run(shard.Options{MinRaysPerDevice: 1, DisablePipeline: true, Weights: []float64{9, 1}})
	require.Equal(t, shard.ModeSharded, l.LastDispatch().Mode)
	require.Equal(t, []shard.Shard{sh(0, 0, 29), sh(1, 29, 33)}, l.LastDispatch().Shards)
}

// test_two_identical_pipelined_runs_are_bitwise_identical.
func TestTwoIdenticalPipelinedRunsAreBitwiseIdentical(t *testing.T) {
	l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1, Weights: []float64{3, 2}})
	b := newBatch(301, 3)
	first, err := shard.RunRows(context.Background(), l, reflectTask(b, 4))
	require.NoError(t, err)
	second, err := shard.RunRows(context.Background(), l, reflectTask(b, 4))
	require.NoError(t, err)
	requireReflectionsBitwise(t, first, second)
}

// test_empty_batches_take_the_master_replica and
// test_result_headers_and_types_survive_the_gather.
func TestEmptyBatchesAndRecordShapes(t *testing.T) {
	l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1})
	ctx := context.Background()
	b := newBatch(0, 1)
	h, err := shard.RunRows(ctx, l, intersectTask(b, geom.FlagsAll))
	require.NoError(t, err)
	require.Equal(t, 0, h.Len())
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	r, err := shard.RunRows(ctx, l, reflectTask(b, 2))
	require.NoError(t, err)
	require.Equal(t, 0, r.Len())
	require.Equal(t, 2, r.Bounces)
	v, err := shard.RunRows(ctx, l, visibleTask(b))
	require.NoError(t, err)
	require.Empty(t, v)
	b = newBatch(40, 9)
	h, err = shard.RunRows(ctx, l, intersectTask(b, geom.FlagsNone))
	require.NoError(t, err)
	require.Equal(t, geom.FlagsNone, h.Flags)
	require.Nil(t, h.P, "the reduced record keeps its shape")
	require.Len(t, h.T, 40)
	require.Equal(t, shard.ModePipelined, l.LastDispatch().Mode)
	require.Equal(t, 4, *l.LastChunkPlan().MeasuredRowBytes)
	h, err = shard.RunRows(ctx, l, intersectTask(b, geom.FlagGeometric|geom.FlagUV))
	require.NoError(t, err)
	require.Nil(t, h.N)
	require.Len(t, h.UV, 80)
	require.Equal(t, "intersect_full", l.LastDispatch().Operation)
}

// ChunkedSingleDeviceTests: test_chunked_results_are_bitwise_the_unchunked_results,
// test_an_empty_batch_is_still_one_empty_result.
func TestChunkedSingleDevice(t *testing.T) {
	s := reference(t)
	b := newBatch(33, 4)
	for _, c := range []int{1, 7, 11, 64} {
		l, _ := newLayer(t, 1, []int{0}, shard.Options{ChunkRays: c})
		checkAllOps(t, l, s, b)
		p := l.LastChunkPlan()
		require.Equal(t, min(c, 33), p.ChunkRays)
		require.Equal(t, (33+c-1)/c, p.ChunkCount)
		require.Equal(t, shard.ModeChunked, l.LastDispatch().Mode)
	}
	l, c := newLayer(t, 1, []int{0}, shard.Options{ChunkRays: 7})
	c.ResetStats()
	h, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(0, 1), geom.FlagsAll))
	require.NoError(t, err)
	require.Equal(t, 0, h.Len())
	require.Equal(t, 0, l.LastChunkPlan().ChunkCount)
	require.Equal(t, 1, c.Stats(0).Launches, "one empty launch on the master")
}

// test_a_tiny_tape_budget_picks_a_small_chunk_and_still_completes.
func TestTinyBudgetStillCompletes(t *testing.T) {
	l, _ := newLayer(t, 1, []int{0}, shard.Options{MemoryBudgetBytes: 33*42 + 3*170*4})
	b := newBatch(33, 8)
	got, err := shard.RunRows(context.Background(), l, reflectTask(b, 2))
	require.NoError(t, err)
	want, err := reference(t).TraceReflections(b.o, b.d, b.tmax, b.active, 2)
	require.NoError(t, err)
	requireReflectionsBitwise(t, want, got)
	p := l.LastChunkPlan()
	require.Equal(t, 4, p.ChunkRays)
	require.Equal(t, 9, p.ChunkCount)
	require.Equal(t, shard.SourceBudget, p.Source)
	require.Equal(t, int64(33*42+3*170*4), *p.BudgetBytes)
	require.Greater(t, *p.MeasuredRowBytes, 0)
	require.Less(t, *p.MeasuredRowBytes, p.RowBytes)
}

// ChunkedTwoDeviceTests: test_chunked_two_device_results_match_the_single_device_results.
func TestChunkedTwoDevice(t *testing.T) {
	s := reference(t)
	b := newBatch(33, 10)
	for _, c := range []int{1, 7, 64} {
		l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{ChunkRays: c})
		checkAllOps(t, l, s, b)
		require.Equal(t, (16+c-1)/c+(17+c-1)/c, l.LastChunkPlan().ChunkCount)
	}
}

// 4- and 8-device topologies, with uneven weights, a master that is not
// ordinal 0 and a modelled slow link and slow master (the results must not
// depend on timing).
func TestFourAndEightDevices(t *testing.T) {
	s := reference(t)
	for _, cfg := range []struct {
		devices []int
		o       shard.Options
	}{
		{[]int{0, 1, 2, 3}, shard.Options{MinRaysPerDevice: 4}},
		{[]int{2, 0, 3, 1}, shard.Options{MinRaysPerDevice: 4, Weights: []float64{1, 2, 3, 4}}},
		{[]int{3, 2, 1, 0}, shard.Options{ChunkRays: 5}},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, shard.Options{MinRaysPerDevice: 2}},
		{[]int{7, 6, 5, 4, 3, 2, 1, 0}, shard.Options{MinRaysPerDevice: 2, DisablePipeline: true, Weights: []float64{8, 1, 1, 1, 1, 1, 1, 0}}},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, shard.Options{ChunkRays: 3, Weights: []float64{1, 0, 1, 0, 1, 0, 1, 0}}},
	} {
		t.Run(fmt.Sprint(cfg.devices, cfg.o.Weights), func(t *testing.T) {
			c := simdev.New(simdev.Config{Devices: 8, LinkBytesPerSecond: 1e9, RowNanos: 50, Speed: []float64{0.25}})
			l, err := shard.Plan(cfg.devices, c, cfg.o)
			require.NoError(t, err)
			require.NoError(t, l.Build(context.Background(), c.Builder(cfg.devices[0], fixtureMeshes())))
			defer func() { require.NoError(t, l.Close()) }()
			for _, n := range []int{7, 64, 333} {
				checkAllOps(t, l, s, newBatch(n, uint64(n)+100))
			}
			require.NotEqual(t, shard.ModeMaster, l.LastDispatch().Mode)
			require.Zero(t, c.LivePayloads())
		})
	}
}

// §13 row 31: a per-row input whose length is not the batch's is refused
// before any launch (geom's typed length error), and the layer stays usable.
func TestPerRowInputsMustMatchTheBatch(t *testing.T) {
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1})
	b := newBatch(40, 1)
	task := intersectTask(b, geom.FlagsAll)
	task.TMax = task.TMax[:39]
	_, err := shard.RunRows(context.Background(), l, task)
	require.ErrorIs(t, err, geom.ErrLength)
	var le *geom.LengthError
	require.ErrorAs(t, err, &le)
	require.Equal(t, "tmax", le.Field)
	vt := visibleTask(b)
	vt.Active = vt.Active[:3]
	_, err = shard.RunRows(context.Background(), l, vt)
	require.ErrorIs(t, err, geom.ErrLength)
	_, err = shard.RunRows(context.Background(), l, reflectTask(b, 0))
	require.ErrorIs(t, err, geom.ErrInvalidArgument)
	_, err = shard.RunRows(context.Background(), l, intersectTask(b, geom.Flags(8)))
	require.ErrorIs(t, err, geom.ErrInvalidArgument)
	require.Empty(t, c.Log())
	require.Nil(t, l.LastDispatch())
}

// A layer is safe for concurrent queries, and a broadcast waits for the
// queries in flight: every answer is wholly that of one geometry, never a
// mix (test_a_broadcast_sync_issued_straight_after_a_query_does_not_disturb_it,
// test_a_query_issued_straight_after_a_broadcast_sync_sees_the_new_geometry).
func TestConcurrentQueriesAndBroadcasts(t *testing.T) {
	l, c := newLayer(t, 4, []int{0, 1, 2, 3}, shard.Options{MinRaysPerDevice: 8})
	b := newBatch(200, 21)
	flat := reference(t)
	tilted, err := c.NewReplica(0, true, func() []geom.Mesh { m := fixtureMeshes(); m[0].Vertices = moved(); return m }())
	require.NoError(t, err)
	defer tilted.Close()
	want := map[bool]*geom.Hits{}
	for k, s := range map[bool]interface {
		Intersect(o, d, tmax []float32, active []bool, f geom.Flags) (*geom.Hits, error)
	}{false: flat, true: tilted.Scene()} {
		want[k], err = s.Intersect(b.o, b.d, b.tmax, b.active, geom.FlagsAll)
		require.NoError(t, err)
	}
	require.NotEqual(t, bits32(want[false].T), bits32(want[true].T))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 3 {
		wg.Go(func() {
			for range 6 {
				got, err := shard.RunRows(ctx, l, intersectTask(b, geom.FlagsAll))
				if err != nil {
					errs <- err
					return
				}
				if !slices.Equal(bits32(got.T), bits32(want[false].T)) && !slices.Equal(bits32(got.T), bits32(want[true].T)) {
					errs <- fmt.Errorf("a query saw a mix of two geometries")
					return
				}
				_ = l.LastDispatch()
				_ = l.LastChunkPlan()
			}
		})
	}
	wg.Go(func() {
		flatV := workload.GridMesh(8, 2).Vertices
		for i := range 6 {
			v := moved()
			if i%2 == 1 {
				v = flatV
			}
			for _, m := range []shard.Mutation{shard.UpdateVertices{Mesh: 0, Vertices: v}, shard.SyncGeometry{}} {
				if err := l.Broadcast(ctx, m); err != nil {
					errs <- err
					return
				}
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// The last broadcast restored the flat grid.
	got, err := shard.RunRows(ctx, l, intersectTask(b, geom.FlagsAll))
	require.NoError(t, err)
	requireHitsBitwise(t, want[false], got)
}
