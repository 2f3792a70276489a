package calibrate_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/calibrate"
)

// A RayD-mode record reads as RayD's describe(), line for line, followed
// by the margin and the NEAR-CROSSOVER warning (seed §5.4, calibration 1).
func TestRecordString(t *testing.T) {
	rec := &calibrate.Record{
		Operation: "trace_reflections:1", Rows: 4194304, Devices: []int{0, 1}, Mode: calibrate.ModeRayD,
		Seconds: []float64{0.00113, 0}, ThroughputWeights: []float64{2, 0},
		Candidates:       [][]float64{{1, 1}, {1, 0.25}, {1, 0}},
		CandidateSeconds: []float64{0.00188, 0.001311, 0.001281},
		Weights:          []float64{1, 0.25}, Chosen: 1, MarginPct: -2.3, NearCrossover: true,
	}
	want := strings.Join([]string{
		"trace_reflections:1 probe, 4194304 rows",
		"  cuda:0     1.130 ms   3711.77 Mrow/s  weight 2.0000",
		"  cuda:1  (no timing)  weight 0.0000",
		"  dispatch [1.0000, 1.0000]     1.880 ms",
		"  dispatch [1.0000, 0.2500]     1.311 ms  <-- chosen",
		"  dispatch [1.0000, 0.0000]     1.281 ms",
		"  margin: best sharded rung 1.311 ms vs master-only 1.281 ms (-2.3% for sharding); kept a remote share on tolerance alone",
		"  NEAR-CROSSOVER: the decision flips between runs; pin the master alone",
	}, "\n")
	require.Equal(t, want, rec.String())
	require.Equal(t, 2, rec.MasterOnly())
	require.Equal(t, 1, rec.BestSharded())
	require.True(t, rec.Sharded())
	rps := rec.RowsPerSecond()
	require.InDelta(t, 4194304/0.00113, rps[0], 1e-3)
	require.Zero(t, rps[1])
}

// The record travels as JSON with RayD's field names.
func TestRecordJSON(t *testing.T) {
	m := lightReflections1().withNoise(11, jitter(0.06))
	rec, _ := calibrateModel(t, m, calibrate.Options{Operation: "trace_reflections:1"})
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(b, &fields))
	for _, k := range []string{"operation", "rows", "devices", "seconds", "weights", "samples", "throughput_weights",
		"candidates", "candidate_seconds", "candidate_samples", "comparisons", "mode", "margin_pct", "near_crossover", "chosen"} {
		require.Contains(t, fields, k)
	}
	var back calibrate.Record
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, rec.String(), back.String())
}
