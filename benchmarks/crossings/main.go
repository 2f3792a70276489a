// Command crossings benchmarks the crossings query (every hit along a
// segment, the k least kept) against visibility on the compute scene of
// benchmarks/geometry: the 2,097,152-triangle cloud in [−1, 1]³ and its
// 4,194,304 volume rays. Each ray gives two segments: its chord across the
// box (entry to exit of the ray's line through [−1, 1]³) and the segment
// o → o + d that benchmarks/geometry times visibility on.
//
// For each node layout (2-wide child-pair, 4-wide quantized) it times, with
// CUDA events on device-resident inputs and outputs, in interleaved rounds
// after warm-up rounds: crossings with k (default 8) and visibility on the
// chords, and both on the geometry segments, all on a BVH built with
// accel.Options.Fetch FetchAuto (the headline figures); and crossings on the
// chords on a second build of the same geometry with the fetch mode
// FetchAuto does not pick (FetchBatch where crossings fetch rows
// dynamically), the query row named "crossings (k=8, Fetch batch)". The
// report gives the median and minimum over rounds, the ratios of the
// crossings times to the visibility times (target: at most 2) and the
// dynamic-fetch crossings time over the batch one.
//
// Each timed configuration is then rerun exactly as timed (the same
// launcher, layout, k, outputs and persistent-launch counter) on poisoned
// outputs; every row must be written, and a random sample of rows is
// compared with the CPU reference (ref.Scene.Crossings / Visible) bit for
// bit, every field. A mismatch fails the run.
//
//	crossings -out benchmarks/results/crossings-h200.json
//
// With -walks N it needs no GPU: it counts, on a host build of the same
// scene, the nodes and triangle tests per row of visible's walk and of
// crossings' walk over the first N segments of each batch (walks.go).
//
//	crossings -walks 20000
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

type report struct {
	benchhead.Header
	Rounds    int            `json:"rounds"`
	Warmup    int            `json:"warmup"`
	K         int            `json:"k"`
	Scene     string         `json:"scene"`
	Triangles int            `json:"triangles"`
	Segments  int            `json:"segments"`
	Layouts   []layoutResult `json:"layouts"`
	Target    string         `json:"target"`
	Verdicts  []string       `json:"verdicts"`
}

func main() {
	ordinal := flag.Int("device", 0, "device ordinal")
	rounds := flag.Int("rounds", 15, "timed rounds")
	warmup := flag.Int("warmup", 2, "warm-up rounds")
	sample := flag.Int("check", 65536, "rows checked against the CPU reference per query")
	rays := flag.Int("rays", 1<<22, "segments per batch")
	k := flag.Int("k", 8, "hits kept per row")
	out := flag.String("out", "", "JSON output path")
	walks := flag.Int("walks", 0, "no GPU: walk this many segments of each batch on a host build, any-hit and full, and report the work per row")
	flag.Parse()
	if *walks > 0 {
		if err := runWalks(*walks, *out); err != nil {
			fmt.Fprintln(os.Stderr, "crossings:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*ordinal, *rounds, *warmup, *sample, *rays, *k, *out); err != nil {
		fmt.Fprintln(os.Stderr, "crossings:", err)
		os.Exit(1)
	}
}

func run(ordinal, rounds, warmup, sample, rays, k int, out string) error {
	d, err := launch.Open(ordinal)
	if err != nil {
		return err
	}
	defer d.Close()
	h, err := benchhead.New(ordinal)
	if err != nil {
		return err
	}
	cfg := workload.Compute.Scaled(rays)
	rep := report{Header: h, Rounds: rounds, Warmup: warmup, K: k, Scene: cfg.Name,
		Target: "crossings (k = 8, chords) <= 2x visible"}
	fmt.Printf("# rayd-go crossings benchmark on %s (cuda:%d, %d SMs, driver %d), build %s\n", h.Device.Name, ordinal, h.Device.SMs, h.Driver, h.Build)
	fmt.Printf("# %s scene, %d segments, k = %d, %d warm-up + %d timed rounds, interleaved; median (min) ms via CUDA events\n",
		cfg.Name, rays, k, warmup, rounds)
	if err := geom.CheckCrossingsK(k); err != nil {
		return err
	}
	f, err := newFixture(d, cfg, k)
	if err != nil {
		return err
	}
	defer f.close()
	rep.Triangles, rep.Segments = f.tables.NumFaces(), f.n
	for _, w := range []int{2, 4} {
		lr, err := f.bench(w, k, rounds, warmup, sample)
		if err != nil {
			return fmt.Errorf("w%d: %w", w, err)
		}
		rep.Layouts = append(rep.Layouts, *lr)
		printLayout(lr)
	}
	rep.Verdicts = verdicts(rep.Layouts)
	for _, v := range rep.Verdicts {
		fmt.Println("verdict:", v)
	}
	if out != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	for _, l := range rep.Layouts {
		for _, q := range l.Queries {
			if q.Mismatches > 0 {
				return fmt.Errorf("w%d %s: %d of %d checked rows differ from the CPU reference", l.Width, q.Name, q.Mismatches, q.Checked)
			}
		}
	}
	return nil
}

func printLayout(l *layoutResult) {
	fmt.Printf("w%d (%d nodes, height %d)\n", l.Width, l.Nodes, l.Height)
	for _, q := range l.Queries {
		fmt.Printf("  %-32s %-8s %9.3f (%9.3f) ms  checked %d, mismatched %d\n", q.Name, q.Fetch, q.Ms.Median, q.Ms.Min, q.Checked, q.Mismatches)
	}
	fmt.Printf("  crossings / visible: chords %.2f, chords over geometry segments %.2f, geometry segments %.2f; chords: mean count %.2f, overflow %.4f\n",
		l.RatioChords, l.RatioGeometry, l.RatioSameGeometry, l.MeanCount, l.OverflowShare)
	fmt.Printf("  crossings on the chords, dynamic row fetching / 32-row batches: %.2f\n", l.DynamicOverBatch)
}

func verdicts(ls []layoutResult) []string {
	var out []string
	for _, l := range ls {
		for _, c := range []struct {
			what  string
			ratio float64
		}{{"on the chords, of visible on the same chords", l.RatioChords},
			{"on the chords, of visible on the geometry segments", l.RatioGeometry},
			{"on the geometry segments, of visible on the same segments", l.RatioSameGeometry}} {
			met := "met"
			if c.ratio > 2 {
				met = "missed"
			}
			out = append(out, fmt.Sprintf("w%d: crossings at %.2fx %s (target <= 2x): %s", l.Width, c.ratio, c.what, met))
		}
	}
	return out
}
