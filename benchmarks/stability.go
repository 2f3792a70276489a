package benchmarks

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// Stability summarizes repeated runs of the benchmark row by row: the
// spread of each row's speedup and, for calibrated rows, which weights the
// calibrations chose (the seed's "what is stable and what is not" table).
type Stability struct {
	// Runs is the number of records summarized.
	Runs int `json:"runs"`
	// Rows are the rows with a speedup, configs in first-seen order and
	// rows in the printed order.
	Rows []StabilityRow `json:"rows"`
}

// StabilityRow is one (config, row) over the runs that measured it.
type StabilityRow struct {
	// Config is the configuration name.
	Config string `json:"config"`
	// Row is the row's JSON key ("intersect_calibrated").
	Row string `json:"row"`
	// Label is the row's printed operation ("intersect (calibrated)").
	Label string `json:"label"`
	// Runs is the number of runs whose row has a speedup.
	Runs int `json:"runs"`
	// Min, Median and Max are the speedup's order statistics.
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	// Calibrated marks a calibrated row.
	Calibrated bool `json:"calibrated,omitempty"`
	// Weights tallies the chosen weights of a calibrated row, most frequent
	// first.
	Weights []WeightTally `json:"weights,omitempty"`
	// SlowerThanOneGPU counts the calibrated runs re-timed below 0.98x,
	// that is more than 2% slower than the master alone.
	SlowerThanOneGPU int `json:"slower_than_one_gpu,omitempty"`
	// NearCrossover counts the calibrated runs flagged NEAR-CROSSOVER.
	NearCrossover int `json:"near_crossover,omitempty"`
}

// WeightTally is how many runs chose one set of weights.
type WeightTally struct {
	// Weights are the chosen weights as printed: "1.000, 0.000".
	Weights string `json:"weights"`
	// Runs is the number of runs that chose them.
	Runs int `json:"runs"`
}

// Summarize summarizes the rows of recs (nil records are skipped).
func Summarize(recs []*Record) *Stability {
	type acc struct {
		row      StabilityRow
		speedups []float64
		tally    map[string]int
	}
	s := &Stability{Rows: []StabilityRow{}}
	var order []string
	accs := map[string]*acc{}
	for _, r := range recs {
		if r == nil {
			continue
		}
		s.Runs++
		for _, name := range configOrder(r) {
			c := r.Configs[name]
			for _, l := range rowsOf(&c) {
				if l.row.Speedup == nil {
					continue
				}
				id := name + "\x00" + l.key
				a := accs[id]
				if a == nil {
					a = &acc{row: StabilityRow{Config: name, Row: l.key, Label: l.label, Calibrated: l.calibrated},
						tally: map[string]int{}}
					accs[id] = a
					order = append(order, id)
				}
				sp := *l.row.Speedup
				a.speedups = append(a.speedups, sp)
				if l.calibrated {
					a.tally[weightsKey(l.row.Weights)]++
					if sp < SlowerThanOneGPU {
						a.row.SlowerThanOneGPU++
					}
					if l.row.Margin != nil && l.row.Margin.NearCrossover {
						a.row.NearCrossover++
					}
				}
			}
		}
	}
	configRank := map[string]int{}
	for _, id := range order {
		if c := accs[id].row.Config; configRank[c] == 0 {
			configRank[c] = len(configRank) + 1
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		ri, rj := accs[order[i]].row, accs[order[j]].row
		if configRank[ri.Config] != configRank[rj.Config] {
			return configRank[ri.Config] < configRank[rj.Config]
		}
		return rowRank(ri.Row) < rowRank(rj.Row)
	})
	for _, id := range order {
		a := accs[id]
		slices.Sort(a.speedups)
		a.row.Runs = len(a.speedups)
		a.row.Min, a.row.Max = a.speedups[0], a.speedups[len(a.speedups)-1]
		a.row.Median = median(a.speedups)
		for w, n := range a.tally {
			a.row.Weights = append(a.row.Weights, WeightTally{Weights: w, Runs: n})
		}
		sort.Slice(a.row.Weights, func(i, j int) bool {
			wi, wj := a.row.Weights[i], a.row.Weights[j]
			if wi.Runs != wj.Runs {
				return wi.Runs > wj.Runs
			}
			return wi.Weights < wj.Weights
		})
		s.Rows = append(s.Rows, a.row)
	}
	return s
}

// rowRank is a row key's position in the printed order.
func rowRank(key string) int {
	return slices.Index([]string{"intersect", "trace_reflections", "intersect_calibrated",
		"trace_reflections_calibrated", "accum_dfr_direct", "accum_dfr_direct_calibrated", "intersect_offload"}, key)
}

// weightsKey prints weights as the table does; "--" when there are none.
func weightsKey(w []float64) string {
	if len(w) == 0 {
		return "--"
	}
	parts := make([]string, len(w))
	for i, x := range w {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, ", ")
}

// median of sorted, non-empty v.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// WriteTable prints the summary as a markdown table: Row | min | median |
// max | runs | comment. The comment of a calibrated row tallies its chosen
// weights and counts its slow and near-crossover runs; that of any other
// row gives the spread (max − min) as a share of the median.
func (s *Stability) WriteTable(w io.Writer) error {
	if s == nil {
		return errors.New("benchmarks: nil stability summary")
	}
	var sb strings.Builder
	sb.WriteString("| Row | min | median | max | runs | comment |\n")
	writeCells(&sb, []string{"---", "---", "---", "---", "---", "---"})
	for _, r := range s.Rows {
		op, rest, _ := strings.Cut(r.Label, " ")
		name := fmt.Sprintf("%s `%s`", r.Config, op)
		if rest != "" {
			name += " " + rest
		}
		writeCells(&sb, []string{name, fmt.Sprintf("%.2fx", r.Min), fmt.Sprintf("%.2fx", r.Median),
			fmt.Sprintf("%.2fx", r.Max), fmt.Sprint(r.Runs), r.comment()})
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// comment is the row's comment cell.
func (r StabilityRow) comment() string {
	if !r.Calibrated {
		if r.Median <= 0 || math.IsNaN(r.Median) {
			return "--"
		}
		return fmt.Sprintf("spread %.1f%% of the median", (r.Max-r.Min)/r.Median*100)
	}
	parts := make([]string, 0, len(r.Weights)+2)
	for _, t := range r.Weights {
		parts = append(parts, fmt.Sprintf("[%s] %d/%d", t.Weights, t.Runs, r.Runs))
	}
	if r.SlowerThanOneGPU > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d below %.2fx", r.SlowerThanOneGPU, r.Runs, SlowerThanOneGPU))
	}
	if r.NearCrossover > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d NEAR-CROSSOVER", r.NearCrossover, r.Runs))
	}
	return strings.Join(parts, "; ")
}
