package shard_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

func planRows(t *testing.T, devices int, o shard.Options, op shard.Op, rows int) *shard.Schedule {
	t.Helper()
	ds := make([]int, devices)
	for i := range ds {
		ds[i] = i
	}
	l, err := shard.Plan(ds, shard.Uniform(devices), o)
	require.NoError(t, err)
	s, err := l.PlanRows(op, rows)
	require.NoError(t, err)
	return s
}

// test_the_floor_is_applied_to_the_actual_remote_shard (m=17, transfer 100).
func TestFloorIsAppliedToTheActualRemoteShard(t *testing.T) {
	op := shard.IntersectOp(geom.FlagsAll)
	for rows, want := range map[int]shard.Mode{32: shard.ModeMaster, 33: shard.ModePipelined, 0: shard.ModeMaster} {
		s := planRows(t, 2, shard.Options{MinRaysPerDevice: 17}, op, rows)
		require.Equal(t, want, s.Dispatch.Mode, "rows %d", rows)
		require.Equal(t, 17, s.Dispatch.Floor)
	}
	// §15.3: at the default floor N = 524287 is the first sharded size.
	require.Equal(t, shard.ModeMaster, planRows(t, 2, shard.Options{}, op, 524286).Dispatch.Mode)
	require.Equal(t, shard.ModePipelined, planRows(t, 2, shard.Options{}, op, 524287).Dispatch.Mode)
}

// test_dispatch_floor_uses_the_actual_remote_shard (m=10).
func TestDispatchFloorUsesTheActualRemoteShard(t *testing.T) {
	op := shard.VisibleOp()
	require.Equal(t, shard.ModeMaster, planRows(t, 2, shard.Options{MinRaysPerDevice: 10, Weights: []float64{91, 9}}, op, 100).Dispatch.Mode)
	require.Equal(t, shard.ModePipelined, planRows(t, 2, shard.Options{MinRaysPerDevice: 10, Weights: []float64{9, 1}}, op, 100).Dispatch.Mode)
	// Four devices: one starved remote is enough to keep everything home.
	s := planRows(t, 4, shard.Options{MinRaysPerDevice: 10, Weights: []float64{1, 1, 1, 0.1}}, op, 100)
	require.Equal(t, shard.ModeMaster, s.Dispatch.Mode)
	require.Equal(t, []shard.Shard{sh(0, 0, 100)}, s.Chunks)
}

// test_wide_rows_raise_the_copy_amortization_floor.
func TestWideRowsRaiseTheFloor(t *testing.T) {
	narrow := shard.Op{Key: "narrow", TransferRowBytes: 1, RowBytes: 1}
	wide := shard.Op{Key: "wide", TransferRowBytes: 1 << 20, RowBytes: 1}
	require.Equal(t, shard.ModePipelined, planRows(t, 2, shard.Options{MinRaysPerDevice: 10}, narrow, 40).Dispatch.Mode)
	s := planRows(t, 2, shard.Options{MinRaysPerDevice: 10}, wide, 40)
	require.Equal(t, shard.ModeMaster, s.Dispatch.Mode)
	require.Equal(t, 104858, s.Dispatch.Floor)
}

// test_the_auto_chunking_gives_every_shard_at_least_two_chunks and the
// pipelined plans of §6.1.
func TestPipelinedChunkPlan(t *testing.T) {
	s := planRows(t, 2, shard.Options{MinRaysPerDevice: 1}, shard.IntersectOp(geom.FlagsAll), 33)
	require.Equal(t, shard.ModePipelined, s.Dispatch.Mode)
	require.Equal(t, shard.SourcePipeline, s.Plan.Source)
	require.Equal(t, [2]int{5, 16}, [2]int{s.Plan.ChunkRays, s.Plan.MasterChunkRays})
	require.Equal(t, 5, s.Plan.ChunkCount)
	require.Equal(t, []shard.Shard{sh(0, 0, 16), sh(1, 16, 21), sh(1, 21, 26), sh(1, 26, 31), sh(1, 31, 33)}, s.Chunks)
	require.Equal(t, 4, s.Depth)
	for rows, chunk := range map[int]int{1 << 20: 131072, 4194304: 524288} {
		s = planRows(t, 2, shard.Options{}, shard.IntersectOp(geom.FlagsAll), rows)
		require.Equal(t, chunk, s.Plan.ChunkRays)
		require.Equal(t, 5, s.Plan.ChunkCount)
	}
	// A device weighted far below the widest gets fewer chunks.
	s = planRows(t, 2, shard.Options{MinRaysPerDevice: 1, Weights: []float64{9, 1}}, shard.VisibleOp(), 1000)
	require.Equal(t, 225, s.Plan.ChunkRays)
	require.Equal(t, 2, s.Plan.ChunkCount)
	// PipelineChunksPerDevice cuts the widest shard.
	s = planRows(t, 2, shard.Options{MinRaysPerDevice: 1, PipelineChunksPerDevice: 32}, shard.VisibleOp(), 1000)
	require.Equal(t, 16, s.Plan.ChunkRays)
	require.Equal(t, 1+32, s.Plan.ChunkCount)
}

// §6.2: round-robin issue order, and the chunked plan of
// test_chunked_two_device_results_match_the_single_device_results.
func TestIssueOrder(t *testing.T) {
	s := planRows(t, 2, shard.Options{ChunkRays: 7}, shard.IntersectOp(geom.FlagsAll), 33)
	require.Equal(t, shard.ModeChunked, s.Dispatch.Mode)
	starts := []int{}
	for _, c := range s.Chunks {
		starts = append(starts, c.Start)
	}
	require.Equal(t, []int{0, 16, 7, 23, 14, 30}, starts)
	require.Equal(t, 6, s.Plan.ChunkCount)
	// Eight devices, chunk 3 over 40 rows: five rows each, two chunks each.
	s = planRows(t, 8, shard.Options{ChunkRays: 3}, shard.VisibleOp(), 40)
	require.Len(t, s.Chunks, 16)
	for i, c := range s.Chunks {
		dev, k := i%8, i/8
		require.Equal(t, sh(dev, 5*dev+3*k, min(5*dev+3*k+3, 5*dev+5)), c)
	}
}

// test_an_explicit_chunking_contract_outranks_the_floor and the [1,0]
// shortcut of test_a_degenerate_split_is_dispatched_as_a_single_device_call.
func TestExplicitChunkingOutranksTheFloor(t *testing.T) {
	s := planRows(t, 2, shard.Options{ChunkRays: 8}, shard.IntersectOp(geom.FlagsAll), 33)
	require.Equal(t, shard.ModeChunked, s.Dispatch.Mode)
	require.Equal(t, shard.SourceRequested, s.Plan.Source)
	s = planRows(t, 2, shard.Options{ChunkRays: 8, Weights: []float64{1, 0}}, shard.IntersectOp(geom.FlagsAll), 33)
	require.Equal(t, shard.ModeChunked, s.Dispatch.Mode, "a memory contract holds at [1,0] too")
	require.Equal(t, 5, s.Plan.ChunkCount)
	s = planRows(t, 2, shard.Options{Weights: []float64{1, 0}}, shard.IntersectOp(geom.FlagsAll), 1<<24)
	require.Equal(t, shard.ModeMaster, s.Dispatch.Mode)
	require.Nil(t, s.Plan)
	s = planRows(t, 2, shard.Options{DisablePipeline: true, MinRaysPerDevice: 1}, shard.VisibleOp(), 33)
	require.Equal(t, shard.ModeSharded, s.Dispatch.Mode)
	require.Equal(t, []shard.Shard{sh(0, 0, 16), sh(1, 16, 33)}, s.Chunks)
	s = planRows(t, 2, shard.Options{DisablePipeline: true, MinRaysPerDevice: 1}, shard.VisibleOp(), 0)
	require.Equal(t, shard.ModeMaster, s.Dispatch.Mode)
}

// 4- and 8-device pipelined plans.
func TestManyDevicePlans(t *testing.T) {
	s := planRows(t, 4, shard.Options{MinRaysPerDevice: 1}, shard.TraceReflectionsOp(4), 1000)
	require.Equal(t, []shard.Shard{sh(0, 0, 250), sh(1, 250, 500), sh(2, 500, 750), sh(3, 750, 1000)}, s.Dispatch.Shards)
	require.Equal(t, 63, s.Plan.ChunkRays)
	require.Equal(t, 1+3*4, s.Plan.ChunkCount)
	require.Equal(t, 8, s.Depth)
	s = planRows(t, 8, shard.Options{MinRaysPerDevice: 100, Weights: []float64{1, 1, 1, 1, 1, 1, 1, 2}}, shard.VisibleOp(), 900)
	require.Equal(t, shard.ModePipelined, s.Dispatch.Mode)
	require.Equal(t, sh(7, 700, 900), s.Dispatch.Shards[7])
	require.Equal(t, 50, s.Plan.ChunkRays)
	require.Equal(t, 1+6*2+4, s.Plan.ChunkCount)
	s = planRows(t, 8, shard.Options{MinRaysPerDevice: 101, Weights: []float64{1, 1, 1, 1, 1, 1, 1, 2}}, shard.VisibleOp(), 900)
	require.Equal(t, shard.ModeMaster, s.Dispatch.Mode)
}

// The introspection records carry the documented JSON names.
func TestRecordsMarshalWithTheirJSONNames(t *testing.T) {
	s := planRows(t, 2, shard.Options{MinRaysPerDevice: 1}, shard.IntersectOp(geom.FlagsAll), 33)
	raw, err := json.Marshal(s.Plan)
	require.NoError(t, err)
	var plan map[string]any
	require.NoError(t, json.Unmarshal(raw, &plan))
	for _, k := range []string{"operation", "total_rows", "chunk_rays", "master_chunk_rays", "source", "row_bytes",
		"budget_bytes", "resident_chunks", "fixed_output_bytes", "chunk_count", "measured_row_bytes"} {
		require.Contains(t, plan, k)
	}
	require.Nil(t, plan["budget_bytes"])
	raw, err = json.Marshal(s.Dispatch)
	require.NoError(t, err)
	require.JSONEq(t, `{"operation":"intersect_full","class":"per_ray","dispatch":"pipelined","rows":33,
		"weights":[1,1],"shards":[{"device":0,"replica":0,"start":0,"stop":16},{"device":1,"replica":1,"start":16,"stop":33}],"floor":1,
		"path":"copy","driver_calls":0,"context_binds":0}`, string(raw))
}
