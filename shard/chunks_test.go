package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// ChunkSizeCalibrationTests.
func TestChunkSizeCalibration(t *testing.T) {
	size := func(r shard.ChunkRequest) (int, shard.Source) {
		t.Helper()
		n, src, err := shard.SizeChunk(r)
		require.NoError(t, err)
		return n, src
	}
	// test_an_explicit_request_wins_and_is_clamped_to_the_batch
	n, src := size(shard.ChunkRequest{Rows: 33, RowBytes: 142, ChunkRays: 7, Resident: 3})
	require.Equal(t, 7, n)
	require.Equal(t, shard.SourceRequested, src)
	n, _ = size(shard.ChunkRequest{Rows: 33, RowBytes: 142, ChunkRays: 64, Resident: 3})
	require.Equal(t, 33, n)
	n, src = size(shard.ChunkRequest{Rows: 33, RowBytes: 142, ChunkRays: 7, Budget: 1 << 30, Resident: 3})
	require.Equal(t, 7, n)
	require.Equal(t, shard.SourceRequested, src)
	// test_a_budget_picks_the_largest_chunk_that_fits
	n, src = size(shard.ChunkRequest{Rows: 1_000_000, RowBytes: 142, Budget: 142_000, Resident: 1})
	require.Equal(t, 1000, n)
	require.Equal(t, shard.SourceBudget, src)
	// test_without_a_request_or_a_budget_a_chunk_is_the_whole_shard
	n, src = size(shard.ChunkRequest{Rows: 33, RowBytes: 142, Resident: 3})
	require.Equal(t, 33, n)
	require.Equal(t, shard.SourceShard, src)
	n, _ = size(shard.ChunkRequest{Rows: 0, RowBytes: 142, Resident: 3})
	require.Equal(t, 1, n)
}

// test_a_budget_below_one_resident_row_fails_loudly, test_fixed_concatenated_output_is_reserved_before_chunk_sizing,
// §13 rows 32 and 33.
func TestBudgetRefusals(t *testing.T) {
	_, _, err := shard.SizeChunk(shard.ChunkRequest{Operation: "x", Rows: 33, RowBytes: 142, Budget: 1, Resident: 1})
	require.ErrorIs(t, err, shard.ErrBudget)
	require.ErrorContains(t, err, "at least 142 bytes are required")
	_, _, err = shard.SizeChunk(shard.ChunkRequest{Rows: 8192, RowBytes: 1, Budget: 8192, Resident: 1, Fixed: 8192})
	require.ErrorIs(t, err, shard.ErrBudget)
	require.ErrorContains(t, err, "fixed returned output")
	var be *shard.BudgetError
	require.ErrorAs(t, err, &be)
	require.Equal(t, int64(8193), be.Required)
	require.Equal(t, int64(8192), be.Budget)
	_, _, err = shard.SizeChunk(shard.ChunkRequest{Rows: 100, RowBytes: 10, ChunkRays: 50, Budget: 1000, Resident: 3})
	require.ErrorIs(t, err, shard.ErrBudget)
	require.ErrorContains(t, err, "requires an estimated 1500 bytes")
}

// test_budget_accounts_for_three_resident_pipeline_chunks.
func TestBudgetAccountsForThreeResidentChunks(t *testing.T) {
	l, err := shard.Plan([]int{0, 1}, shard.Uniform(2), shard.Options{MemoryBudgetBytes: 1_000_000, Offload: func(int, any) error { return nil }})
	require.NoError(t, err)
	op := shard.TraceReflectionsOp(2)
	require.Equal(t, 170, op.MemoryRowBytes())
	s, err := l.PlanRows(op, 1<<20)
	require.NoError(t, err)
	c := int64(s.Plan.ChunkRays)
	require.Equal(t, shard.SourceBudget, s.Plan.Source)
	require.LessOrEqual(t, c*170*3, int64(1_000_000))
	require.Greater(t, (c+1)*170*3, int64(1_000_000))
	require.Equal(t, 3, s.Plan.ResidentChunks)
	require.Zero(t, s.Plan.FixedOutputBytes, "streamed results reserve no output")
}

// §6.8's worked example and the visible twin of
// test_a_tiny_tape_budget_picks_a_small_chunk_and_still_completes.
func TestWorkedBudgetExample(t *testing.T) {
	l, err := shard.Plan([]int{0}, shard.Uniform(1), shard.Options{MemoryBudgetBytes: 33*42 + 3*170*4})
	require.NoError(t, err)
	s, err := l.PlanRows(shard.TraceReflectionsOp(2), 33)
	require.NoError(t, err)
	require.Equal(t, 4, s.Plan.ChunkRays)
	require.Equal(t, 9, s.Plan.ChunkCount)
	require.Equal(t, int64(33*42), s.Plan.FixedOutputBytes)
	s, err = l.PlanRows(shard.VisibleOp(), 33)
	require.NoError(t, err)
	require.Equal(t, 33, s.Plan.ChunkRays)
	require.Equal(t, 1, s.Plan.ChunkCount)
	require.Equal(t, int64(33), s.Plan.FixedOutputBytes)
}

// test_a_concatenated_result_larger_than_the_budget_fails_loudly: the
// refusal comes before any launch, and the layer stays usable.
func TestConcatenatedResultLargerThanTheBudgetFailsBeforeLaunch(t *testing.T) {
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MemoryBudgetBytes: 4096})
	b := newBatch(4096, 5)
	_, err := shard.RunRows(context.Background(), l, intersectTask(b, geom.FlagsAll))
	require.ErrorIs(t, err, shard.ErrBudget)
	require.ErrorContains(t, err, "Offload")
	for d := range 2 {
		st := c.Stats(d)
		require.Zero(t, st.Launches+st.Scatters+st.Enters, "device %d was touched", d)
	}
	require.NoError(t, l.Poisoned())
	// Budget + chunk_rays (§13 row 32), also before any launch.
	l2, c2 := newLayer(t, 2, []int{0, 1}, shard.Options{MemoryBudgetBytes: 10_000, ChunkRays: 64,
		Offload: func(int, any) error { return nil }})
	_, err = shard.RunRows(context.Background(), l2, intersectTask(newBatch(200, 6), geom.FlagsAll))
	require.ErrorIs(t, err, shard.ErrBudget)
	require.ErrorContains(t, err, "requires an estimated 19200 bytes")
	require.Zero(t, c2.Stats(0).Launches+c2.Stats(1).Launches)
}

// test_the_plan_reports_what_it_was_asked.
func TestThePlanReportsWhatItWasAsked(t *testing.T) {
	l, err := shard.Plan([]int{0}, shard.Uniform(1), shard.Options{ChunkRays: 7})
	require.NoError(t, err)
	s, err := l.PlanRows(shard.IntersectOp(geom.FlagsAll), 33)
	require.NoError(t, err)
	p := s.Plan
	require.Equal(t, "intersect_full", p.Operation)
	require.Equal(t, 33, p.TotalRows)
	require.Equal(t, 100, p.RowBytes)
	require.Nil(t, p.BudgetBytes)
	require.Nil(t, p.MeasuredRowBytes)
	require.Equal(t, shard.ChunkPlan{Operation: "intersect_full", TotalRows: 33, ChunkRays: 7, Source: shard.SourceRequested,
		RowBytes: 100, ResidentChunks: 3, ChunkCount: 5}, *p)
}

// The byte model of §3.2.
func TestByteModel(t *testing.T) {
	for _, c := range []struct {
		op                          shard.Op
		key                         string
		row, result, transfer, cost int
	}{
		{shard.IntersectOp(geom.FlagsAll), "intersect_full", 76, 76, 100, 100},
		{shard.IntersectOp(geom.FlagsNone), "intersect_reduced", 4, 4, 28, 28},
		{shard.TraceReflectionsOp(1), "trace_reflections:1", 71, 21, 49, 99},
		{shard.TraceReflectionsOp(4), "trace_reflections:4", 284, 84, 112, 312},
		{shard.VisibleOp(), "visible", 1, 1, 26, 26},
	} {
		require.Equal(t, c.key, c.op.Key)
		require.Equal(t, shard.PerRay, c.op.Class)
		require.Equal(t, c.row, c.op.RowBytes, c.key)
		require.Equal(t, c.result, c.op.ResultRowBytes, c.key)
		require.Equal(t, c.transfer, c.op.TransferRowBytes, c.key)
		require.Equal(t, c.cost, c.op.MemoryRowBytes(), c.key)
	}
	require.Equal(t, "per_ray", shard.PerRay.String())
	require.Equal(t, "grid_reduce", shard.GridReduce.String())
}
