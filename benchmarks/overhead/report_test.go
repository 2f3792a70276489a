package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The overhead is replicated − single of the same statistic: medians of
// the interleaved rounds (the upper middle of an even count), minima apart.
func TestSetTimesTakesBothFiguresFromTheSameStatistic(t *testing.T) {
	var r row
	r.setTimes([]float64{0.52, 0.50, 0.49, 0.60, 0.51}, []float64{0.55, 0.56, 0.58, 0.54, 0.70})
	assert.Equal(t, 5, r.Rounds)
	assert.Equal(t, "median", r.Statistic)
	assert.Equal(t, 0.51, r.SingleMS)
	assert.Equal(t, 0.56, r.ReplicatedMS)
	assert.InDelta(t, 0.05, r.OverheadMS, 1e-12)
	assert.Equal(t, 0.49, r.SingleMinMS)
	assert.Equal(t, 0.54, r.ReplicatedMinMS)
	assert.InDelta(t, 0.05, r.OverheadMinMS, 1e-12)
	assert.Equal(t, []float64{0.52, 0.50, 0.49, 0.60, 0.51}, r.SingleRoundsMS, "rounds kept in order")

	r.setTimes([]float64{1, 2, 3, 4}, []float64{1.5, 2.5, 3.5, 4.5})
	assert.Equal(t, 3.0, r.SingleMS)
	assert.Equal(t, 3.5, r.ReplicatedMS)
}

func TestJudgeUsesTheRecordThenTheMeasuredCount(t *testing.T) {
	r := row{Config: "light", Op: opIntersect, OverheadMS: 0.04, DriverCalls: 14,
		Measured: measured{Replicated: calls{DriverCalls: 31}, Single: calls{DriverCalls: 6}}}
	r.judge()
	assert.Equal(t, int64(14), r.JudgedCalls)
	assert.Equal(t, callsFromRecord, r.JudgedSource)
	require.NotNil(t, r.Met.Overhead)
	assert.True(t, *r.Met.Overhead)
	assert.True(t, r.Met.DriverCalls)
	assert.True(t, r.Met.All)
	assert.Empty(t, r.missed())

	r.DriverCalls = 0 // the layer does not count: the measured count is judged
	r.OverheadMS = 0.051
	r.judge()
	assert.Equal(t, int64(31), r.JudgedCalls)
	assert.Equal(t, callsFromMeasured, r.JudgedSource)
	assert.False(t, *r.Met.Overhead)
	assert.False(t, r.Met.DriverCalls)
	assert.False(t, r.Met.All)
	assert.Equal(t, []string{
		"light intersect: overhead +0.051 ms > +0.050 ms",
		"light intersect: 31 driver calls (measured around the call) > 20",
	}, r.missed())

	v := row{Config: "light", Op: opVisible, OverheadMS: 1, DriverCalls: 20}
	v.judge()
	assert.Nil(t, v.Met.Overhead, "no overhead bound, no verdict")
	assert.True(t, v.Met.All, "20 calls meet a limit of 20")
}

// The JSON names of a row: what a reader of the evidence looks up.
func TestRowJSONShape(t *testing.T) {
	r := row{Op: opAccum, Config: "compute", Samples: 1 << 26, Dispatch: "lane-sharded", Weights: []float64{0.5, 0.5}}
	r.setTimes([]float64{5.5}, []float64{5.53})
	r.Measured = measured{Replicated: calls{DriverCalls: 25, ContextBinds: 3}, Single: calls{DriverCalls: 9, ContextBinds: 1}}
	r.Check, _ = compareAccum(accumResult(1), accumResult(1))
	r.judge()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"op", "config", "samples", "dispatch", "path", "weights", "rounds", "statistic",
		"single_ms", "replicated_ms", "overhead_ms", "single_min_ms", "replicated_min_ms", "overhead_min_ms",
		"single_rounds_ms", "replicated_rounds_ms", "driver_calls", "context_binds", "measured",
		"driver_calls_judged", "driver_calls_source", "target", "met", "check"} {
		assert.Contains(t, m, k)
	}
	assert.NotContains(t, m, "rows", "an accumulation row has samples")
	assert.Equal(t, map[string]any{"replicated": map[string]any{"driver_calls": 25.0, "context_binds": 3.0},
		"single": map[string]any{"driver_calls": 9.0, "context_binds": 1.0}}, m["measured"])
	assert.Equal(t, map[string]any{"overhead_ms": 0.05, "driver_calls": 30.0}, m["target"])
	assert.Equal(t, map[string]any{"overhead": true, "driver_calls": true, "all": true}, m["met"])
	assert.Equal(t, "", m["path"], "an empty path is written")
	chk := m["check"].(map[string]any)
	assert.Equal(t, true, chk["pass"])
	assert.Equal(t, false, chk["outputs_poisoned"])
	assert.Contains(t, chk, "grid_rel_l2_max")
	assert.Contains(t, chk, "counters_equal")
}

// A missed target is reported, a failed check is a failure.
func TestReportSeparatesMissedTargetsFromFailures(t *testing.T) {
	rep := newReport(newHeader(), options{warmup: 3})
	ok := row{Op: opIntersect, Config: "light", Rows: 4, OverheadMS: 0.2, Check: check{Pass: true}}
	ok.judge()
	bad := row{Op: opReflect, Config: "light", Rows: 4, Check: check{RowsMismatched: 2, RowsPoisoned: 1}}
	bad.judge()
	rep.add(ok)
	rep.add(bad)
	assert.Equal(t, []string{"light intersect: overhead +0.200 ms > +0.050 ms"}, rep.Missed)
	require.Len(t, rep.Failures, 1)
	assert.Contains(t, rep.Failures[0], "light trace_reflections(1): 2 rows differ, 1 left poisoned")
	assert.Equal(t, "auto", rep.Transfer)
	assert.Equal(t, []float64{0.5, 0.5}, rep.Weights)

	var sb strings.Builder
	writeTable(&sb, rep.Rows)
	out := sb.String()
	assert.Contains(t, out, "<= +0.05 MISSED")
	assert.Contains(t, out, "FAIL (2 rows differ, 1 left poisoned)")
	assert.Contains(t, out, "4 rays")
	s := summary(rep)
	assert.True(t, strings.HasPrefix(s, "2 rows, 1 targets missed, 1 correctness failures\n"), s)
	assert.Contains(t, s, "FAILED: light trace_reflections(1)")
}
