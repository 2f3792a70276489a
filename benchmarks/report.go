package benchmarks

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rayd-go/rayd/calibrate"
)

// NearCrossoverBand is the |margin| in percent inside which a calibration
// is flagged NEAR-CROSSOVER: the 3% refinement tolerance plus about 2% of
// run-to-run spread (spec §10.5).
const NearCrossoverBand = calibrate.NearCrossoverBand

// SlowerThanOneGPU is the speedup below which a calibrated row is flagged
// SLOWER THAN ONE GPU.
const SlowerThanOneGPU = 0.98

// rayRowBytes is the size of one Ray row sent out: two float3.
const rayRowBytes = 24

// Calibration verdicts of the printed calibration lines.
const (
	VerdictKeptOnTolerance = "kept a remote share on tolerance alone"
	VerdictSharded         = "sharded with a measured margin"
	VerdictMasterAlone     = "chose the master alone"
)

// labeledRow is one present row of a config with its printed label.
type labeledRow struct {
	key, label string
	perRay     bool
	calibrated bool
	row        *Row
}

// rowsOf lists c's present rows in the printed order.
func rowsOf(c *Config) []labeledRow {
	all := []labeledRow{
		{"intersect", "intersect", true, false, c.Intersect},
		{"trace_reflections", "trace_reflections", true, false, c.TraceReflections},
		{"intersect_calibrated", "intersect (calibrated)", true, true, c.IntersectCalibrated},
		{"trace_reflections_calibrated", "trace_reflections (calibrated)", true, true, c.TraceReflectionsCalibrated},
		{"accum_dfr_direct", "accum_dfr_direct", false, false, c.AccumDfrDirect},
		{"accum_dfr_direct_calibrated", "accum_dfr_direct (calibrated)", false, true, c.AccumDfrDirectCalibrated},
		{"intersect_offload", "intersect (chunked + offload)", true, false, c.IntersectOffload},
	}
	return slices.DeleteFunc(all, func(l labeledRow) bool { return l.row == nil })
}

// configOrder is the printed order of r's configs: selected_configs order
// first, then any other config by name.
func configOrder(r *Record) []string {
	var names []string
	for _, n := range r.Parameters.SelectedConfigs {
		if _, ok := r.Configs[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var rest []string
	for n := range r.Configs {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// WriteTable renders r as the benchmark prints it (spec §10.6): the
// markdown table, then a blank line and the overlap and calibration lines
// when there are any.
func WriteTable(w io.Writer, r *Record) error {
	if r == nil {
		return errors.New("benchmarks: nil record")
	}
	var sb strings.Builder
	n := r.Machine.DeviceCount
	scales := scaleCounts(r, n)
	header := []string{"Configuration", "Operation", "Batch", "1 GPU"}
	for _, k := range scales {
		header = append(header, fmt.Sprintf("%d GPUs", k))
	}
	if n > 1 {
		header = append(header, fmt.Sprintf("%d GPUs", n))
	} else {
		header = append(header, "multi (n/a)")
	}
	header = append(header, "speedup", "dispatch", "path", "driver calls", "chunks", "weights", "check")
	writeCells(&sb, header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	writeCells(&sb, sep)

	var notes []string
	var calib []string
	for _, name := range configOrder(r) {
		c := r.Configs[name]
		for _, l := range rowsOf(&c) {
			writeCells(&sb, tableRow(name, l, scales))
			if line := overlapLine(name, l); line != "" {
				notes = append(notes, line)
			}
			if line := calibrationLine(name, l); line != "" {
				calib = append(calib, line)
			}
		}
	}
	if lines := append(notes, calib...); len(lines) > 0 {
		sb.WriteString("\n")
		for _, line := range lines {
			sb.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// scaleCounts lists the device counts of every row's Scaling entries below n.
func scaleCounts(r *Record, n int) []int {
	var ks []int
	for _, c := range r.Configs {
		for _, l := range rowsOf(&c) {
			for _, s := range l.row.Scaling {
				if s.Devices != n && !slices.Contains(ks, s.Devices) {
					ks = append(ks, s.Devices)
				}
			}
		}
	}
	slices.Sort(ks)
	return ks
}

// tableRow is one table line's cells.
func tableRow(config string, l labeledRow, scales []int) []string {
	row := l.row
	cells := []string{config, l.label, row.Batch, msCell(&row.SingleMS)}
	for _, k := range scales {
		cell := "--"
		for _, s := range row.Scaling {
			if s.Devices == k {
				cell = fmt.Sprintf("%.2f ms (%.2fx)", s.MultiMS, s.Speedup)
				break
			}
		}
		cells = append(cells, cell)
	}
	speedup := "--"
	if row.Speedup != nil {
		speedup = fmt.Sprintf("%.2fx", *row.Speedup)
	}
	calls := "--"
	if row.DriverCalls > 0 {
		calls = strconv.FormatInt(row.DriverCalls, 10)
	}
	cells = append(cells, msCell(row.MultiMS), speedup, orDash(row.Dispatch), orDash(row.Path), calls)
	chunks := "--"
	if row.ChunkCount > 0 {
		chunks = strconv.Itoa(row.ChunkCount)
	}
	weights := "--"
	if len(row.Weights) > 0 {
		ws := make([]string, len(row.Weights))
		for i, w := range row.Weights {
			ws[i] = fmt.Sprintf("%.3f", w)
		}
		weights = strings.Join(ws, ", ")
	}
	check := "--"
	switch {
	case l.perRay && row.BitwiseAgreement != nil:
		check = fmt.Sprintf("bitwise %.6f", *row.BitwiseAgreement)
	case !l.perRay && row.RelativeGridDeviation != nil:
		check = fmt.Sprintf("dev %.1e", *row.RelativeGridDeviation)
	}
	return append(cells, chunks, weights, check)
}

// msCell renders a time as "1.27 ms", or "--" when absent.
func msCell(v *float64) string {
	if v == nil {
		return "--"
	}
	return fmt.Sprintf("%.2f ms", *v)
}

// orDash is s, or "--" when empty.
func orDash(s string) string {
	if s == "" {
		return "--"
	}
	return s
}

// writeCells writes one markdown table line, escaping '|' in cells.
func writeCells(sb *strings.Builder, cells []string) {
	sb.WriteString("|")
	for _, c := range cells {
		sb.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
	}
	sb.WriteString("\n")
}

// overlapLine is the §10.4 line of a row with an overlap model.
func overlapLine(config string, l labeledRow) string {
	o := l.row.Overlap
	if o == nil {
		return ""
	}
	multi := o.PipeBoundMS + o.ResidualMS
	if l.row.MultiMS != nil {
		multi = *l.row.MultiMS
	}
	return fmt.Sprintf("- overlap, %s %s: %d chunks, %d B per row round trip = %.2f ms per chunk; "+
		"no overlap would cost %.2f ms, perfect overlap %.2f ms, measured %.2f ms "+
		"(residual %+.2f ms = fixed cost + unhidden copies)",
		config, l.label, l.row.ChunkCount, o.TripBytes, o.ChunkTripMS,
		o.SerialBoundMS, o.PipeBoundMS, multi, o.ResidualMS)
}

// Verdict is the calibration line's reading of m ("" for a nil margin).
func (m *Margin) Verdict() string {
	switch {
	case m == nil:
		return ""
	case m.KeptOnTolerance:
		return VerdictKeptOnTolerance
	case m.Sharded:
		return VerdictSharded
	default:
		return VerdictMasterAlone
	}
}

// calibrationLine is the §10.5 line of a row with a margin.
func calibrationLine(config string, l labeledRow) string {
	m := l.row.Margin
	if m == nil {
		return ""
	}
	retimed, flags := "--", ""
	if m.NearCrossover {
		flags += " -- NEAR-CROSSOVER, decision flips between runs"
	}
	if s := l.row.Speedup; s != nil {
		retimed = fmt.Sprintf("%.2fx", *s)
		if *s < SlowerThanOneGPU {
			flags += " -- SLOWER THAN ONE GPU"
		}
	}
	label := strings.TrimSuffix(l.label, " (calibrated)")
	return fmt.Sprintf("- calibration, %s %s: %s; best sharded rung %.2f ms vs master-only %.2f ms "+
		"(%+.1f%% for sharding), re-timed at %s%s",
		config, label, m.Verdict(), m.BestShardedMS, m.MasterOnlyMS, m.MarginPct, retimed, flags)
}

// OverlapModel is the §10.4 overlap model of a chunked row: rows of
// rowBytes output (measured_row_bytes, else row_bytes) plus a 24-byte Ray
// travel in chunks of chunkRows over a d2dGBps link (GiB/s taken as
// gbps·1e9 bytes/s, as the benchmark does). It is nil when any input is
// not positive.
func OverlapModel(singleMS, multiMS float64, rays, chunkRows, rowBytes int, d2dGBps float64) *Overlap {
	if !(singleMS > 0 && multiMS > 0 && d2dGBps > 0 && !math.IsInf(d2dGBps, 0)) ||
		rays <= 0 || chunkRows <= 0 || rowBytes <= 0 {
		return nil
	}
	trip := rayRowBytes + rowBytes
	perByte := 1e3 / (d2dGBps * 1e9)
	chunkTrip := float64(chunkRows) * float64(trip) * perByte
	compute := singleMS / 2
	pipe := compute + chunkTrip
	return &Overlap{
		TripBytes:     trip,
		ChunkTripMS:   chunkTrip,
		SerialBoundMS: compute + float64(rays)/2*float64(trip)*perByte,
		PipeBoundMS:   pipe,
		ResidualMS:    multiMS - pipe,
	}
}

// MarginOf reads a calibration ladder against the master alone (§10.5):
// cands are the rungs' weights, candMS their times and chosen the chosen
// weights (nil: the fastest rung). The master-only rung is the last; the
// best sharded rung is the fastest with a non-zero remote weight. It is nil
// without a ladder (or when cands and candMS differ in length).
// NearCrossover needs both kinds of rung: a ladder without a sharded rung
// has margin 0 but nothing to flip to.
func MarginOf(cands [][]float64, candMS []float64, chosen []float64) *Margin {
	if len(cands) == 0 || len(cands) != len(candMS) {
		return nil
	}
	weights := chosen
	if len(weights) == 0 {
		weights = cands[argmin(candMS)]
	}
	m := &Margin{MasterOnlyMS: candMS[len(candMS)-1], Sharded: hasRemote(weights)}
	best := -1
	for k, w := range cands {
		if hasRemote(w) && (best < 0 || candMS[k] < candMS[best]) {
			best = k
		}
	}
	if best >= 0 {
		m.BestShardedMS = candMS[best]
		if m.MasterOnlyMS > 0 {
			m.MarginPct = (m.MasterOnlyMS - m.BestShardedMS) / m.MasterOnlyMS * 100
			m.NearCrossover = math.Abs(m.MarginPct) <= NearCrossoverBand
		}
	}
	m.KeptOnTolerance = m.Sharded && m.MarginPct <= 0
	return m
}

// hasRemote reports whether any weight after the master's is non-zero.
func hasRemote(w []float64) bool {
	return len(w) > 1 && slices.ContainsFunc(w[1:], func(x float64) bool { return x != 0 })
}

// argmin is the index of the smallest value (the first on ties).
func argmin(v []float64) int {
	k := 0
	for i, x := range v {
		if x < v[k] {
			k = i
		}
	}
	return k
}
