package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rayd-go/rayd/internal/benchhead"
)

// summary is edgeab's output. Commit and Dirty repeat side b's (the build
// set against the baseline a), so that the summary is cited by that build.
type summary struct {
	Commit string   `json:"commit"`
	Dirty  *bool    `json:"dirty"`
	A      sideInfo `json:"a"`
	B      sideInfo `json:"b"`
	Rows   []row    `json:"queries"`
}

// sideInfo identifies one side's build and runs.
type sideInfo struct {
	Commit string          `json:"commit"`
	Dirty  *bool           `json:"dirty"`
	Driver json.RawMessage `json:"driver_version"`
	Device device          `json:"device"`
	Files  []string        `json:"files"`
	Dates  []string        `json:"dates"`
}

// row compares one query of one configuration.
type row struct {
	Config string `json:"config"`
	Query  string `json:"query"`
	Edges  int    `json:"edges"`
	A      stat   `json:"a"`
	B      stat   `json:"b"`
	// Ratio is b's pooled median over a's; RatioMin b's least round over a's.
	Ratio    float64 `json:"b_over_a_pooled_median"`
	RatioMin float64 `json:"b_over_a_min"`
}

// stat is one side's timing of one query over its runs, in milliseconds.
type stat struct {
	RunMedians   []float64 `json:"run_medians_ms"`
	MedianOfRuns float64   `json:"median_of_run_medians_ms"`
	PooledMedian float64   `json:"pooled_median_ms"`
	Min          float64   `json:"min_ms"`
	Rounds       int       `json:"rounds"`
	BruteChecked int       `json:"rows_checked_vs_device_brute_force"`
	RefChecked   int       `json:"rows_checked_vs_cpu_reference"`
	Mismatched   int       `json:"mismatched_rows"`
}

func info(s *side) sideInfo {
	f := s.first()
	in := sideInfo{Commit: f.Commit, Dirty: f.Dirty, Driver: f.Driver, Device: f.Device}
	for _, r := range s.recs {
		in.Files = append(in.Files, r.path)
		in.Dates = append(in.Dates, r.Date)
	}
	return in
}

// compare builds the summary of every configuration and query that each run
// of both sides holds (in a's first record's order).
func compare(a, b *side) (*summary, error) {
	if a.first().Device != b.first().Device {
		return nil, fmt.Errorf("sides a and b name different devices (%v, %v)", a.first().Device, b.first().Device)
	}
	if a.first().Queries != b.first().Queries {
		return nil, fmt.Errorf("side a ran %d rows per query, side b %d", a.first().Queries, b.first().Queries)
	}
	s := &summary{A: info(a), B: info(b)}
	s.Commit, s.Dirty = s.B.Commit, s.B.Dirty
	for _, c := range a.first().Configs {
		for _, q := range c.Queries {
			ra, rb := a.runs(c.Name, q.Name), b.runs(c.Name, q.Name)
			if !complete(ra) || !complete(rb) {
				continue
			}
			sa, err := summarize(a.label, c.Name, q.Name, ra)
			if err != nil {
				return nil, err
			}
			sb, err := summarize(b.label, c.Name, q.Name, rb)
			if err != nil {
				return nil, err
			}
			s.Rows = append(s.Rows, row{Config: c.Name, Query: q.Name, Edges: c.Edges, A: sa, B: sb,
				Ratio: sb.PooledMedian / sa.PooledMedian, RatioMin: sb.Min / sa.Min})
		}
	}
	if len(s.Rows) == 0 {
		return nil, fmt.Errorf("no configuration and query is measured by every run of both sides")
	}
	return s, nil
}

func complete(runs []*queryRec) bool {
	for _, r := range runs {
		if r == nil {
			return false
		}
	}
	return true
}

// summarize pools one side's runs of a query; a run that reports a failed
// check, or has no rounds, is an error.
func summarize(label, cfg, query string, runs []*queryRec) (stat, error) {
	var st stat
	var all []float64
	for i, r := range runs {
		if f := r.failures(); len(f) > 0 {
			return stat{}, fmt.Errorf("side %s, run %d, %s %s: %s", label, i+1, cfg, query, strings.Join(f, "; "))
		}
		if len(r.Ms.Rounds) == 0 {
			return stat{}, fmt.Errorf("side %s, run %d, %s %s: no timed rounds", label, i+1, cfg, query)
		}
		st.RunMedians = append(st.RunMedians, r.Ms.Median)
		all = append(all, r.Ms.Rounds...)
		st.BruteChecked += r.BruteChecked
		st.RefChecked += r.RefChecked
		st.Mismatched += r.BruteMismatches + r.RefMismatches
	}
	st.MedianOfRuns = benchhead.Summarize(st.RunMedians).Median
	t := benchhead.Summarize(all)
	st.PooledMedian, st.Min, st.Rounds = t.Median, t.Min, len(all)
	return st, nil
}

func (s *summary) print(w io.Writer) {
	fmt.Fprintf(w, "a: %s (%d runs)   b: %s (%d runs)\n", short(s.A.Commit), len(s.A.Files), short(s.B.Commit), len(s.B.Files))
	fmt.Fprintf(w, "%-8s %-9s %26s %26s %8s %8s\n", "config", "query", "a: pooled median / min", "b: pooled median / min", "b/a med", "b/a min")
	for _, r := range s.Rows {
		fmt.Fprintf(w, "%-8s %-9s %15.3f / %6.3f ms %15.3f / %6.3f ms %8.4f %8.4f\n", r.Config, r.Query,
			r.A.PooledMedian, r.A.Min, r.B.PooledMedian, r.B.Min, r.Ratio, r.RatioMin)
		fmt.Fprintf(w, "%18s a run medians %v\n%18s b run medians %v\n", "", ms(r.A.RunMedians), "", ms(r.B.RunMedians))
	}
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func ms(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, " ")
}
