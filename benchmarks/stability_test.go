package benchmarks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stabilityRun is a two-config run with the given speedups and weights.
func stabilityRun(intersect, calibrated, compute float64, weights []float64, near bool) *Record {
	light := Config{
		Note:      "light",
		Intersect: &Row{Batch: "4194304 rays", SingleMS: 1.27, Speedup: ptr(intersect)},
		TraceReflectionsCalibrated: &Row{Batch: "4194304 rays", SingleMS: 1.1, Speedup: ptr(calibrated),
			Weights: weights, Margin: &Margin{NearCrossover: near}},
		AccumDfrDirect: &Row{Batch: "8192 samples", SingleMS: 0.31}, // single device: no speedup
	}
	heavy := Config{
		Note:           "compute",
		AccumDfrDirect: &Row{Batch: "67108864 samples", SingleMS: 34.8, Speedup: ptr(compute)},
	}
	return &Record{
		Parameters: Parameters{SelectedConfigs: []string{"light", "compute"}},
		Configs:    map[string]Config{"light": light, "compute": heavy},
	}
}

func TestSummarize(t *testing.T) {
	recs := []*Record{
		stabilityRun(0.27, 1.00, 1.85, []float64{1, 0}, false),
		nil,
		stabilityRun(0.26, 0.86, 1.81, []float64{1, 0.25}, true),
		stabilityRun(0.28, 1.00, 1.89, []float64{1, 0}, true),
	}
	s := Summarize(recs)
	assert.Equal(t, 3, s.Runs)
	require.Len(t, s.Rows, 3)

	assert.Equal(t, StabilityRow{Config: "light", Row: "intersect", Label: "intersect", Runs: 3,
		Min: 0.26, Median: 0.27, Max: 0.28}, s.Rows[0])
	assert.Equal(t, StabilityRow{Config: "light", Row: "trace_reflections_calibrated",
		Label: "trace_reflections (calibrated)", Runs: 3, Min: 0.86, Median: 1.00, Max: 1.00, Calibrated: true,
		Weights:          []WeightTally{{"1.000, 0.000", 2}, {"1.000, 0.250", 1}},
		SlowerThanOneGPU: 1, NearCrossover: 2}, s.Rows[1])
	assert.Equal(t, "compute", s.Rows[2].Config)
	assert.Equal(t, "accum_dfr_direct", s.Rows[2].Row)
	assert.InDelta(t, 1.85, s.Rows[2].Median, 1e-12)

	var sb strings.Builder
	require.NoError(t, s.WriteTable(&sb))
	assert.Equal(t, "| Row | min | median | max | runs | comment |\n"+
		"| --- | --- | --- | --- | --- | --- |\n"+
		"| light `intersect` | 0.26x | 0.27x | 0.28x | 3 | spread 7.4% of the median |\n"+
		"| light `trace_reflections` (calibrated) | 0.86x | 1.00x | 1.00x | 3 | [1.000, 0.000] 2/3; [1.000, 0.250] 1/3; 1/3 below 0.98x; 2/3 NEAR-CROSSOVER |\n"+
		"| compute `accum_dfr_direct` | 1.81x | 1.85x | 1.89x | 3 | spread 4.3% of the median |\n", sb.String())

	data, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"slower_than_one_gpu":1`)
	assert.Contains(t, string(data), `{"weights":"1.000, 0.000","runs":2}`)
	assert.Contains(t, string(data), `"median":0.27`)
}

func TestSummarizeEvenAndEmpty(t *testing.T) {
	s := Summarize([]*Record{
		stabilityRun(0.2, 1, 1, nil, false),
		stabilityRun(0.4, 1, 1, nil, false),
	})
	assert.InDelta(t, 0.3, s.Rows[0].Median, 1e-12)
	assert.Equal(t, []WeightTally{{"--", 2}}, s.Rows[1].Weights)

	empty := Summarize(nil)
	assert.Equal(t, &Stability{Rows: []StabilityRow{}}, empty)
	var sb strings.Builder
	require.NoError(t, empty.WriteTable(&sb))
	assert.Equal(t, 2, strings.Count(sb.String(), "\n"))

	var nilSummary *Stability
	assert.Error(t, nilSummary.WriteTable(&sb))
}

func TestSummarizeKeepsConfigsTogether(t *testing.T) {
	first := &Record{Configs: map[string]Config{
		"light":   {AccumDfrDirect: &Row{Batch: "8192 samples", Speedup: ptr(0.2)}},
		"compute": {AccumDfrDirect: &Row{Batch: "8192 samples", Speedup: ptr(1.8)}},
	}, Parameters: Parameters{SelectedConfigs: []string{"light", "compute"}}}
	second := &Record{Configs: map[string]Config{
		"light": {Intersect: &Row{Batch: "4194304 rays", Speedup: ptr(0.3)},
			AccumDfrDirect: &Row{Batch: "8192 samples", Speedup: ptr(0.2)}},
	}}
	var got []string
	for _, r := range Summarize([]*Record{first, second}).Rows {
		got = append(got, r.Config+" "+r.Row)
	}
	assert.Equal(t, []string{"light intersect", "light accum_dfr_direct", "compute accum_dfr_direct"}, got)
}
