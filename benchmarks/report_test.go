package benchmarks

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func table(t *testing.T, r *Record) string {
	t.Helper()
	var sb strings.Builder
	require.NoError(t, WriteTable(&sb, r))
	return sb.String()
}

func TestWriteTableHistorical(t *testing.T) {
	r, _ := loadHistorical(t)
	out := table(t, r)
	lines := strings.Split(out, "\n")
	assert.Equal(t, "| Configuration | Operation | Batch | 1 GPU | 2 GPUs | speedup | dispatch | path | driver calls | chunks | weights | check |", lines[0])
	assert.Equal(t, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", lines[1])
	// The seed's table, row for row, with the check column appended.
	for i, want := range []string{
		"| light | intersect | 4194304 rays | 1.27 ms | 4.63 ms | 0.27x | pipelined | -- | -- | 5 | -- | bitwise 1.000000 |",
		"| light | trace_reflections | 4194304 rays | 1.14 ms | 2.26 ms | 0.50x | pipelined | -- | -- | 5 | -- | bitwise 1.000000 |",
		"| light | intersect (calibrated) | 4194304 rays | 1.22 ms | 1.22 ms | 1.00x | master | -- | -- | -- | 0.487, 0.000 | -- |",
		"| light | trace_reflections (calibrated) | 4194304 rays | 1.09 ms | 1.10 ms | 1.00x | master | -- | -- | -- | 1.186, 0.000 | -- |",
		"| light | accum_dfr_direct | 8192 samples | 0.31 ms | 1.34 ms | 0.23x | lane-sharded | -- | -- | 2 | -- | dev 6.5e-08 |",
		"| light | intersect (chunked + offload) | 4194304 rays | 1.27 ms | 4.48 ms | 0.28x | chunked | -- | -- | 8 | -- | -- |",
		"| compute | intersect | 4194304 rays | 19.09 ms | 11.83 ms | 1.61x | pipelined | -- | -- | 5 | -- | bitwise 1.000000 |",
		"| compute | trace_reflections | 4194304 rays | 53.33 ms | 28.38 ms | 1.88x | pipelined | -- | -- | 5 | -- | bitwise 1.000000 |",
		"| compute | intersect (calibrated) | 4194304 rays | 19.08 ms | 11.83 ms | 1.61x | pipelined | -- | -- | 5 | 1.002, 0.998 | -- |",
		"| compute | trace_reflections (calibrated) | 4194304 rays | 53.43 ms | 28.45 ms | 1.88x | pipelined | -- | -- | 5 | 1.000, 1.000 | -- |",
		"| compute | accum_dfr_direct | 67108864 samples | 34.76 ms | 18.83 ms | 1.85x | lane-sharded | -- | -- | 2 | -- | dev 2.9e-07 |",
		"| compute | intersect (chunked + offload) | 4194304 rays | 19.18 ms | 12.54 ms | 1.53x | chunked | -- | -- | 8 | -- | -- |",
		"",
	} {
		assert.Equal(t, want, lines[2+i])
	}
	assert.Contains(t, out, "\n- overlap, light intersect: 5 chunks, 100 B per row round trip = 1.07 ms per chunk; "+
		"no overlap would cost 4.91 ms, perfect overlap 1.70 ms, measured 4.63 ms "+
		"(residual +2.93 ms = fixed cost + unhidden copies)\n")
	assert.Contains(t, out, "\n- overlap, compute intersect (chunked + offload): 8 chunks, 100 B per row round trip")
	assert.Contains(t, out, "\n- calibration, light intersect: chose the master alone; best sharded rung 1.08 ms "+
		"vs master-only 0.43 ms (-154.2% for sharding), re-timed at 1.00x\n")
	assert.Contains(t, out, "\n- calibration, compute trace_reflections: sharded with a measured margin; best sharded "+
		"rung 28.42 ms vs master-only 53.14 ms (+46.5% for sharding), re-timed at 1.88x\n")
	assert.Equal(t, 5, strings.Count(out, "- overlap, "))
	assert.Equal(t, 4, strings.Count(out, "- calibration, "))
	assert.Less(t, strings.Index(out, "- overlap, compute intersect (chunked"), strings.Index(out, "- calibration, light"),
		"overlap lines come before calibration lines")
	assert.True(t, strings.HasSuffix(out, "re-timed at 1.88x\n"))
}

func TestWriteTableSingleDevice(t *testing.T) {
	out := table(t, singleDeviceRecord())
	assert.Equal(t, "| Configuration | Operation | Batch | 1 GPU | multi (n/a) | speedup | dispatch | path | driver calls | chunks | weights | check |\n"+
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"+
		"| light | intersect | 4194304 rays | 1.20 ms | -- | -- | single-device | -- | -- | -- | -- | -- |\n"+
		"| light | accum_dfr_direct | 8192 samples | 0.30 ms | -- | -- | single-device | -- | -- | -- | -- | -- |\n", out)
}

func TestWriteTableScalingColumns(t *testing.T) {
	out := table(t, liveRecord())
	lines := strings.Split(out, "\n")
	assert.Equal(t, "| Configuration | Operation | Batch | 1 GPU | 2 GPUs | 3 GPUs | 4 GPUs | speedup | dispatch | path | driver calls | chunks | weights | check |", lines[0])
	assert.Equal(t, "| compute | intersect | 1048576 rays | 9.00 ms | 4.80 ms (1.87x) | 3.60 ms (2.50x) | 3.00 ms | 3.00x | pipelined | peer-direct | 14 | 9 | -- | bitwise 1.000000 |", lines[2])
	assert.Contains(t, out, "| compute | accum_dfr_direct | 67108864 samples | 30.00 ms | -- | -- | 9.00 ms | 3.33x | lane-sharded | -- | 22 | 4 | -- | dev 3.0e-07 |")
	assert.Contains(t, out, "| compute | accum_dfr_direct (calibrated) |")
	assert.Contains(t, out, "- calibration, compute intersect: sharded with a measured margin; best sharded rung 5.00 ms vs master-only 9.10 ms (+45.1% for sharding), re-timed at 1.80x\n")
	assert.NotContains(t, out, "- calibration, compute trace_reflections", "no margin, no line")
}

func TestCalibrationLineFlags(t *testing.T) {
	row := &Row{Batch: "4194304 rays", SingleMS: 1.1, MultiMS: ptr(1.29), Speedup: ptr(0.85),
		Margin: MarginOf([][]float64{{1, 1}, {1, 0.25}, {1, 0}}, []float64{2.1, 1.311, 1.281}, []float64{1, 0.25})}
	got := calibrationLine("light", labeledRow{key: "trace_reflections_calibrated", label: "trace_reflections (calibrated)", row: row})
	assert.Equal(t, "- calibration, light trace_reflections: kept a remote share on tolerance alone; best sharded rung "+
		"1.31 ms vs master-only 1.28 ms (-2.3% for sharding), re-timed at 0.85x"+
		" -- NEAR-CROSSOVER, decision flips between runs -- SLOWER THAN ONE GPU", got)

	row.Speedup = nil
	got = calibrationLine("light", labeledRow{label: "intersect (calibrated)", row: row})
	assert.True(t, strings.HasSuffix(got, "re-timed at -- -- NEAR-CROSSOVER, decision flips between runs"), got)
}

func TestOverlapModelSpecExample(t *testing.T) {
	// Spec §10.4: light intersect at 49.1 GB/s.
	o := OverlapModel(1.27, 4.63, 4194304, 524288, 76, 49.1)
	require.NotNil(t, o)
	assert.Equal(t, 100, o.TripBytes)
	assert.InDelta(t, 1.07, o.ChunkTripMS, 0.005)
	assert.InDelta(t, 4.91, o.SerialBoundMS, 0.005)
	assert.InDelta(t, 1.70, o.PipeBoundMS, 0.005)
	assert.InDelta(t, 2.93, o.ResidualMS, 0.005)
	assert.InDelta(t, 0.635, o.SerialBoundMS-float64(4194304)/2*100/49.1e9*1e3, 1e-12)

	for _, bad := range [][6]float64{
		{0, 4.63, 4194304, 524288, 76, 49.1}, {1.27, 0, 4194304, 524288, 76, 49.1},
		{1.27, 4.63, 0, 524288, 76, 49.1}, {1.27, 4.63, 4194304, -1, 76, 49.1},
		{1.27, 4.63, 4194304, 524288, 0, 49.1}, {1.27, 4.63, 4194304, 524288, 76, 0},
	} {
		assert.Nil(t, OverlapModel(bad[0], bad[1], int(bad[2]), int(bad[3]), int(bad[4]), bad[5]), "%v", bad)
	}
}

func TestMarginOf(t *testing.T) {
	ladder := [][]float64{{1, 1}, {1, 0.5}, {1, 0.25}, {1, 0}}

	// Compute intersect: sharding wins by a wide margin.
	m := MarginOf(ladder, []float64{9.54, 12.1, 14.3, 16.99}, []float64{1, 1})
	require.NotNil(t, m)
	assert.Equal(t, 16.99, m.MasterOnlyMS)
	assert.Equal(t, 9.54, m.BestShardedMS)
	assert.True(t, m.Sharded)
	assert.InDelta(t, 43.85, m.MarginPct, 0.01)
	assert.False(t, m.KeptOnTolerance)
	assert.False(t, m.NearCrossover)
	assert.Equal(t, VerdictSharded, m.Verdict())

	// Light intersect: master alone, far from the crossover.
	m = MarginOf(ladder, []float64{1.2, 1.1, 1.08, 0.43}, []float64{0.487, 0})
	assert.False(t, m.Sharded)
	assert.InDelta(t, -151.16, m.MarginPct, 0.01)
	assert.Equal(t, VerdictMasterAlone, m.Verdict())

	// No chosen weights: the fastest rung is the chosen one.
	m = MarginOf(ladder, []float64{1.4, 1.35, 1.30, 1.31}, nil)
	assert.True(t, m.Sharded)
	assert.False(t, m.KeptOnTolerance, "a positive margin is not tolerance")
	assert.True(t, m.NearCrossover)

	// Tolerance kept a losing share.
	m = MarginOf(ladder, []float64{1.4, 1.35, 1.311, 1.281}, []float64{1, 0.25})
	assert.True(t, m.KeptOnTolerance)
	assert.Equal(t, VerdictKeptOnTolerance, m.Verdict())

	// A ladder with no sharded rung has nothing to flip to.
	m = MarginOf([][]float64{{1, 0}}, []float64{1.2}, []float64{1, 0})
	assert.Equal(t, &Margin{MasterOnlyMS: 1.2}, m)

	assert.Nil(t, MarginOf(nil, nil, []float64{1, 0}))
	assert.Nil(t, MarginOf(ladder, []float64{1}, nil), "mismatched lengths")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteTableErrors(t *testing.T) {
	assert.Error(t, WriteTable(&strings.Builder{}, nil))
	r, _ := loadHistorical(t)
	assert.EqualError(t, WriteTable(failingWriter{}, r), "disk full")
}

func TestConfigOrder(t *testing.T) {
	r := &Record{Parameters: Parameters{SelectedConfigs: []string{"b", "missing", "b"}},
		Configs: map[string]Config{"c": {}, "a": {}, "b": {}}}
	assert.Equal(t, []string{"b", "a", "c"}, configOrder(r))
}
