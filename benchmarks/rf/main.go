// Command rf benchmarks rayd-go's RF kernels on one GPU: accum_dfr_direct on
// the accumulation fixture of the multi-device benchmark (spec/multidevice.md
// §10.1: one triangle, two states, a 4×4 grid, seed 17) at 8,192, 1M, 16M and
// 67,108,864 samples, and at realistic sizes: accum_dfr_direct with all
// three lane kinds, accum_dfr_coherent_direct and trace_dfr_paths over an
// "urban" scene (the light grid of 72,962 ground triangles with 256 boxes,
// states on the boxes' roof edges, receivers just above the ground), and
// accumulate_reflections with the light (4M plane rays, 1 bounce) and
// compute (2.1M-triangle cloud, 4M volume rays, 4 bounces) workloads.
//
// Each case is timed with CUDA events around the device-resident launch
// (output zeroing, float64 accumulators, kernel, float32 finalization) after
// warm-up launches; the report gives the median and minimum over rounds and
// samples (lanes or rays) per second. A check column compares each case
// with package rf's float64 CPU reference: integer counters exactly, grids
// by relative L2. The fixture cases up to -check samples (by default every
// one, 67,108,864 included) compare the timed launch's own output with the
// reference, run in lane windows on every core; larger fixture cases check
// the fixture's law on the timed output (every lane commits); the urban and
// workload cases rerun the timed kernel with the same scene, grid, material
// and options over lane windows or the first rays (check.launch in the JSON
// says which), since a float64 CPU reference of the full launch would take
// hours.
//
//	rf -out benchmarks/results/rf-h200.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/launch"
)

type report struct {
	benchhead.Header
	Rounds   int               `json:"rounds"`
	Warmup   int               `json:"warmup"`
	Cases    []caseResult      `json:"cases"`
	Peers    map[string]string `json:"reference_figures"`
	Verdicts []string          `json:"verdicts"`
	// Profile is the instruction count of the one case run, from
	// Nsight Compute's raw page (-ncu).
	Profile *ncuProfile `json:"profile,omitempty"`
}

// peerFigures are quoted, not measured here: RayD on an RTX A6000 with the
// OptiX trace backend, the §10.1 accumulation fixture.
var peerFigures = map[string]string{
	"rayd_a6000_accum_dfr_direct_8192_ms":     "0.31",
	"rayd_a6000_accum_dfr_direct_67108864_ms": "34.8",
}

type timing = benchhead.Timing

type check struct {
	// Launch says what the check compares: the timed launch's output, or
	// a rerun of the timed kernel and configuration over a window.
	Launch        string  `json:"launch"`
	Lanes         int     `json:"lanes_checked"`
	CountersEqual bool    `json:"counters_equal"`
	GridRelL2     float64 `json:"grid_rel_l2"`
	Note          string  `json:"note,omitempty"`
}

type caseResult struct {
	Name        string           `json:"name"`
	Op          string           `json:"op"`
	Scene       string           `json:"scene"`
	Triangles   int              `json:"triangles"`
	Width       int              `json:"bvh_width"`
	Lanes       int              `json:"lanes"` // samples, lanes or rays
	Cells       int              `json:"cells"`
	Ms          timing           `json:"ms"`
	PerSecond   float64          `json:"samples_per_s"`
	NsPerSample float64          `json:"ns_per_sample"`
	Counters    map[string]int64 `json:"counters"`
	Check       check            `json:"check"`
}

func main() {
	ordinal := flag.Int("device", 0, "device ordinal")
	rounds := flag.Int("rounds", 15, "timed rounds")
	warmup := flag.Int("warmup", 3, "warm-up launches")
	samples := flag.String("samples", "8192,1048576,16777216,67108864", "fixture sample counts")
	checkMax := flag.Int("check", 1<<26, "largest fixture run compared in full with the CPU reference (run on every core)")
	only := flag.String("only", "", "comma-separated case name prefixes (default all)")
	out := flag.String("out", "", "JSON output path")
	ncu := flag.String("ncu", "", "Nsight Compute raw page (ncu --import R --csv --page raw) of one launch of the one case run, to set its instruction count against the timing")
	flag.Parse()
	var counts []int
	for _, f := range strings.Split(*samples, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintln(os.Stderr, "rf: bad -samples entry", f)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	if err := run(*ordinal, *rounds, *warmup, counts, *checkMax, *only, *out, *ncu); err != nil {
		fmt.Fprintln(os.Stderr, "rf:", err)
		os.Exit(1)
	}
}

func run(ordinal, rounds, warmup int, counts []int, checkMax int, only, out, ncu string) error {
	d, err := launch.Open(ordinal)
	if err != nil {
		return err
	}
	defer d.Close()
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	h, err := benchhead.New(ordinal)
	if err != nil {
		return err
	}
	info, ver := h.Device, h.Driver
	rep := report{Header: h, Rounds: rounds, Warmup: warmup, Peers: peerFigures}
	fmt.Printf("# rayd-go RF benchmark on %s (cuda:%d, %d SMs, driver %d), build %s\n", info.Name, ordinal, info.SMs, ver, h.Build)
	fmt.Printf("# %d warm-up + %d timed launches per case; median (min) ms via CUDA events\n", warmup, rounds)
	fmt.Printf("%-34s %12s %10s %10s %14s %9s  %s\n", "case", "lanes", "median ms", "min ms", "samples/s", "ns/lane", "check")
	b := &bench{s: s, rounds: rounds, warmup: warmup, checkMax: checkMax, only: only}
	defer b.clk.Close()
	cases, err := b.all(counts)
	if err != nil {
		return err
	}
	rep.Cases = cases
	rep.Verdicts = verdicts(cases)
	if ncu != "" {
		if rep.Profile, err = attachProfile(ncu, cases, info.SMs); err != nil {
			return err
		}
		for _, l := range rep.Profile.lines() {
			fmt.Println(l)
		}
		rep.Verdicts = append(rep.Verdicts, rep.Profile.verdict())
	}
	for _, v := range rep.Verdicts {
		fmt.Println("verdict:", v)
	}
	if out != "" {
		js, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, append(js, '\n'), 0o644); err != nil {
			return err
		}
	}
	for _, c := range cases {
		if mismatch(c) {
			return fmt.Errorf("%s: the check against the CPU reference failed (%+v)", c.Name, c.Check)
		}
	}
	return nil
}

// mismatch reports a case whose check failed: counters differ or the
// grids deviate by more than 1e-4 relative L2.
func mismatch(c caseResult) bool {
	return !c.Check.CountersEqual || c.Check.GridRelL2 > 1e-4
}

// bench times launches on one stream.
type bench struct {
	s              *launch.Stream
	rounds, warmup int
	checkMax       int
	only           string
	results        []caseResult
	clk            benchhead.StreamTimer // timeEach's events
}

func (b *bench) wanted(name string) bool {
	if b.only == "" {
		return true
	}
	for _, p := range strings.Split(b.only, ",") {
		if strings.HasPrefix(name, strings.TrimSpace(p)) {
			return true
		}
	}
	return false
}

// wantsUrban reports whether a case over the urban scene is wanted.
func (b *bench) wantsUrban() bool {
	for _, c := range []string{"direct_urban_mixed", "direct_urban_windows", "coherent_urban", "paths_urban"} {
		if b.wanted(c) {
			return true
		}
	}
	return false
}

// time runs launch warmup times, then rounds times between two events.
func (b *bench) time(launchFn func() error) (timing, error) {
	ts, err := b.timeEach(launchFn)
	if err != nil {
		return timing{}, err
	}
	return ts[0], nil
}

// timeEach times variants interleaved (benchhead.Interleave): warmup
// rounds of every variant, then every round times each variant once, in
// order, between two events on the bench's stream.
func (b *bench) timeEach(fns ...func() error) ([]timing, error) {
	timeOne := func(fn func() error) (float64, error) { return b.clk.MS(b.s, fn) }
	ms, err := benchhead.Interleave(b.warmup, b.rounds, b.s.Synchronize, timeOne, fns...)
	if err != nil {
		return nil, err
	}
	out := make([]timing, len(fns))
	for i, m := range ms {
		out[i] = benchhead.Summarize(m)
	}
	return out, nil
}

// record completes and prints a case.
func (b *bench) record(c caseResult, bvh *accel.BVH) {
	c.Width = bvh.Width()
	c.Triangles = bvh.NumTris()
	if c.Ms.Median > 0 {
		c.PerSecond = float64(c.Lanes) / (c.Ms.Median * 1e-3)
		c.NsPerSample = c.Ms.Median * 1e6 / float64(c.Lanes)
	}
	chk := "-"
	if c.Check.Note != "" {
		chk = fmt.Sprintf("%s: %v", c.Check.Note, c.Check.CountersEqual)
	}
	if c.Check.Lanes > 0 {
		chk = fmt.Sprintf("%d lanes: counters equal %v, rel L2 %.1e", c.Check.Lanes, c.Check.CountersEqual, c.Check.GridRelL2)
	}
	fmt.Printf("%-34s %12d %10.3f %10.3f %14.4g %9.3f  %s\n", c.Name, c.Lanes, c.Ms.Median, c.Ms.Min, c.PerSecond, c.NsPerSample, chk)
	b.results = append(b.results, c)
}

func verdicts(cs []caseResult) []string {
	var out []string
	for _, c := range cs {
		if mismatch(c) {
			out = append(out, fmt.Sprintf("%s: MISMATCH with the CPU reference (%+v)", c.Name, c.Check))
		}
		switch c.Name {
		case "direct_fixture_8192":
			out = append(out, fmt.Sprintf("fixture 8,192 samples: %.3f ms (RayD A6000: 0.31 ms)", c.Ms.Median))
		case "direct_fixture_67108864":
			out = append(out, fmt.Sprintf("fixture 67,108,864 samples: %.3f ms (RayD A6000: 34.8 ms), %.3g samples/s", c.Ms.Median, c.PerSecond))
		}
	}
	return out
}
