package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rayd-go/rayd/internal/benchhead"
)

// statistic names the figure single_ms, replicated_ms and overhead_ms are.
const statistic = "median"

// report is the JSON evidence the benchmark writes.
type report struct {
	benchhead.Header
	Mode      string    `json:"mode"`
	Weights   []float64 `json:"weights"`
	Transfer  string    `json:"transfer"`
	Statistic string    `json:"statistic"`
	Warmup    int       `json:"warmup"`
	Rows      []row     `json:"rows"`
	// Missed lists the targets not met (a missed target is reported, not
	// failed on); Failures the correctness failures (the run fails).
	Missed   []string `json:"targets_missed"`
	Failures []string `json:"failures"`
}

// calls is a driver-call count: calls (context binds excluded) and binds.
type calls struct {
	DriverCalls  int64 `json:"driver_calls"`
	ContextBinds int64 `json:"context_binds"`
}

// measured are the driver calls counted around one call of each scene
// (driver.CallCounts before and after): the single-device call is the
// baseline.
type measured struct {
	Replicated calls `json:"replicated"`
	Single     calls `json:"single"`
}

// met says which targets a row met; Overhead is nil without an overhead
// target.
type met struct {
	Overhead    *bool `json:"overhead"`
	DriverCalls bool  `json:"driver_calls"`
	All         bool  `json:"all"`
}

// Sources of the driver-call count a row is judged by.
const (
	callsFromRecord   = "dispatch record"
	callsFromMeasured = "measured around the call"
)

// row is one operation of one configuration: the single-device call and the
// replicated call, timed in the same interleaved rounds.
type row struct {
	Op       string    `json:"op"`
	Config   string    `json:"config"`
	Rows     int       `json:"rows,omitempty"`
	Samples  int       `json:"samples,omitempty"`
	Dispatch string    `json:"dispatch"`
	Path     string    `json:"path"`
	Weights  []float64 `json:"weights"`

	Rounds       int     `json:"rounds"`
	Statistic    string  `json:"statistic"`
	SingleMS     float64 `json:"single_ms"`
	ReplicatedMS float64 `json:"replicated_ms"`
	// OverheadMS is replicated − single of the statistic; OverheadMinMS
	// the same of the minima.
	OverheadMS         float64   `json:"overhead_ms"`
	SingleMinMS        float64   `json:"single_min_ms"`
	ReplicatedMinMS    float64   `json:"replicated_min_ms"`
	OverheadMinMS      float64   `json:"overhead_min_ms"`
	SingleRoundsMS     []float64 `json:"single_rounds_ms"`
	ReplicatedRoundsMS []float64 `json:"replicated_rounds_ms"`

	// DriverCalls and ContextBinds are the replicated call's as its
	// dispatch record counts them (0 when the layer does not count).
	DriverCalls  int64    `json:"driver_calls"`
	ContextBinds int64    `json:"context_binds"`
	Measured     measured `json:"measured"`
	// JudgedCalls is the count held to the driver-call target: the
	// record's, or the measured one when the record has none.
	JudgedCalls  int64  `json:"driver_calls_judged"`
	JudgedSource string `json:"driver_calls_source"`

	Target target `json:"target"`
	Met    met    `json:"met"`
	Check  check  `json:"check"`
}

// setTimes fills the timing figures from the interleaved rounds of the two
// calls (both non-empty).
func (r *row) setTimes(single, repl []float64) {
	s, p := benchhead.Summarize(single), benchhead.Summarize(repl)
	r.Rounds, r.Statistic = len(single), statistic
	r.SingleMS, r.ReplicatedMS, r.OverheadMS = s.Median, p.Median, p.Median-s.Median
	r.SingleMinMS, r.ReplicatedMinMS, r.OverheadMinMS = s.Min, p.Min, p.Min-s.Min
	r.SingleRoundsMS, r.ReplicatedRoundsMS = s.Rounds, p.Rounds
}

// judge holds the row to its target: the overhead of the statistic, and
// the driver calls of the dispatch record, or the measured ones when the
// record counts none.
func (r *row) judge() {
	r.Target = targetFor(r.Config, r.Op)
	r.JudgedCalls, r.JudgedSource = r.DriverCalls, callsFromRecord
	if r.DriverCalls <= 0 {
		r.JudgedCalls, r.JudgedSource = r.Measured.Replicated.DriverCalls, callsFromMeasured
	}
	r.Met = met{DriverCalls: r.JudgedCalls <= r.Target.DriverCalls}
	r.Met.All = r.Met.DriverCalls
	if r.Target.OverheadMS != nil {
		ok := r.OverheadMS <= *r.Target.OverheadMS
		r.Met.Overhead = &ok
		r.Met.All = r.Met.All && ok
	}
}

// missed lists the row's missed targets, one line each.
func (r *row) missed() []string {
	var out []string
	if r.Met.Overhead != nil && !*r.Met.Overhead {
		out = append(out, fmt.Sprintf("%s %s: overhead %+.3f ms > %+.3f ms", r.Config, r.Op, r.OverheadMS, *r.Target.OverheadMS))
	}
	if !r.Met.DriverCalls {
		out = append(out, fmt.Sprintf("%s %s: %d driver calls (%s) > %d", r.Config, r.Op, r.JudgedCalls, r.JudgedSource, r.Target.DriverCalls))
	}
	return out
}

// batch is the row's size: "4194304 rays" or "8192 samples".
func (r *row) batch() string {
	if r.Samples > 0 {
		return fmt.Sprintf("%d samples", r.Samples)
	}
	return fmt.Sprintf("%d rays", r.Rows)
}

func orDash(s string) string {
	if s == "" {
		return "--"
	}
	return s
}

func passFail(ok bool) string {
	if ok {
		return "MET"
	}
	return "MISSED"
}

// writeTable prints the rows: times (statistic and minimum), the overhead
// against its target, the driver calls against theirs, and the check.
func writeTable(w io.Writer, rows []row) {
	fmt.Fprintf(w, "%-8s %-21s %-17s %-12s %-11s %10s %10s %20s %-16s %-26s %s\n", "config", "operation", "batch", "dispatch",
		"path", "single ms", "repl ms", "overhead ms (min)", "overhead target", "driver calls (single)", "check")
	for _, r := range rows {
		over := "--"
		if r.Target.OverheadMS != nil {
			over = fmt.Sprintf("<= %+.2f %s", *r.Target.OverheadMS, passFail(*r.Met.Overhead))
		}
		calls := fmt.Sprintf("%d (%d) <= %d %s", r.JudgedCalls, r.Measured.Single.DriverCalls, r.Target.DriverCalls, passFail(r.Met.DriverCalls))
		check := "pass"
		if !r.Check.Pass {
			check = fmt.Sprintf("FAIL (%d rows differ, %d left poisoned)", r.Check.RowsMismatched, r.Check.RowsPoisoned)
		}
		fmt.Fprintf(w, "%-8s %-21s %-17s %-12s %-11s %10.4f %10.4f %+10.4f (%+.4f) %-16s %-26s %s\n", r.Config, r.Op, r.batch(),
			orDash(r.Dispatch), orDash(r.Path), r.SingleMS, r.ReplicatedMS, r.OverheadMS, r.OverheadMinMS, over, calls, check)
	}
}

// summary is the closing line: targets met and correctness.
func summary(rep *report) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d rows, %d targets missed, %d correctness failures", len(rep.Rows), len(rep.Missed), len(rep.Failures))
	for _, m := range rep.Missed {
		sb.WriteString("\nmissed: " + m)
	}
	for _, f := range rep.Failures {
		sb.WriteString("\nFAILED: " + f)
	}
	return sb.String()
}
