package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/benchmarks/multidevice"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/launch"
)

// buildCommit is set at build time: -ldflags "-X main.buildCommit=$(git rev-parse HEAD)".
var buildCommit = ""

// cmdBench runs the multi-device benchmark (multidevice spec §10): the
// seed-style table with a correctness column, the overlap and calibration
// lines, and optionally the schema-validated JSON record and a plot. On a
// machine without an NVIDIA driver it runs the CPU reference on a small
// built-in scene, says so, and exits 0.
func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "summarize" {
		return cmdBenchSummarize(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "pin" {
		return cmdBenchPin(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "all", "configuration: light, compute or all")
	devices := fs.String("devices", "", `device ordinals, master first ("0,1"); default every visible device`)
	rays := fs.Int("rays", 0, "replace the configurations' batch (rays)")
	samples := fs.Int("accum-samples", 0, "replace the configurations' accum_dfr_direct sample count")
	accumOnly := fs.Bool("accum-only", false, "skip the per_ray rows")
	warmup := fs.Int("warmup", 2, "discarded rounds")
	repeat := fs.Int("repeat", 7, "timed rounds (the minimum is reported)")
	fs.IntVar(repeat, "rounds", 7, "alias of -repeat")
	calRays := fs.Int("calibration-rays", 0, "calibration probe batch (0: the configuration's batch)")
	calRepeats := fs.Int("calibration-repeats", 3, "measured calibration rounds")
	calMode := fs.String("calibration-mode", string(calibrate.ModeNoiseAware), "noise-aware or rayd")
	jsonPath := fs.String("json", "", "write the validated JSON record here (- for stdout)")
	plotPath := fs.String("plot", "", "write the speedup plot here (.png or .svg)")
	commit := fs.String("commit", buildCommit, "commit to record in the provenance (default: the commit the binary was built from)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o := multidevice.Options{Rays: *rays, AccumSamples: *samples, AccumOnly: *accumOnly, Warmup: *warmup, NoWarmup: *warmup == 0,
		Repeat: *repeat, CalibrationRays: *calRays, CalibrationRepeats: *calRepeats, CalibrationMode: calibrate.Mode(*calMode), Commit: *commit}
	if !*quiet {
		o.Log = stderr
	}
	switch *config {
	case "all":
	case "light", "compute":
		o.Configs = []string{*config}
	default:
		fmt.Fprintf(stderr, "rayd bench: unknown -config %q (light, compute or all)\n", *config)
		return 2
	}
	if *calMode != string(calibrate.ModeNoiseAware) && *calMode != string(calibrate.ModeRayD) {
		fmt.Fprintf(stderr, "rayd bench: unknown -calibration-mode %q\n", *calMode)
		return 2
	}
	var err error
	if o.Devices, err = parseDevices(*devices); err != nil {
		fmt.Fprintf(stderr, "rayd bench: %v\n", err)
		return 2
	}
	ctx := context.Background()
	rec, err := runBench(ctx, o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "rayd bench: %v\n", err)
		return 1
	}
	return emitRecord(rec, *jsonPath, *plotPath, stdout, stderr)
}

// runBench runs on the GPUs, or on the CPU reference when no driver loads.
func runBench(ctx context.Context, o multidevice.Options, stdout io.Writer) (*benchmarks.Record, error) {
	n, err := launch.Count()
	if err != nil && !errors.Is(err, driver.ErrNoDriver) && !errors.Is(err, driver.ErrNoDevice) {
		return nil, err
	}
	if err != nil || n == 0 {
		why := "no CUDA device is visible"
		if err != nil {
			why = err.Error()
		}
		fmt.Fprintf(stdout, "rayd bench: no usable GPU (%s)\n", why)
		fmt.Fprintln(stdout, "rayd bench: ran the CPU REFERENCE on a small built-in scene instead (light grid, 16,384 rays); these are not GPU numbers")
		return multidevice.RunCPU(ctx, o)
	}
	rec, err := multidevice.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	if rec.Machine.DeviceCount == 1 {
		fmt.Fprintln(stdout, "rayd bench: one device: single-device numbers only (no calibrated or offload rows)")
	}
	return rec, nil
}

// emitRecord validates the record, prints the table and writes the JSON and
// the plot; any failure is a non-zero exit.
func emitRecord(rec *benchmarks.Record, jsonPath, plotPath string, stdout, stderr io.Writer) int {
	if err := rec.Validate(); err != nil {
		fmt.Fprintf(stderr, "rayd bench: the record does not match its schema: %v\n", err)
		return 1
	}
	if err := benchmarks.WriteTable(stdout, rec); err != nil {
		fmt.Fprintf(stderr, "rayd bench: %v\n", err)
		return 1
	}
	switch jsonPath {
	case "":
	case "-":
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "rayd bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "\n%s\n", b)
	default:
		if err := benchmarks.WriteRecord(jsonPath, rec); err != nil {
			fmt.Fprintf(stderr, "rayd bench: writing %s: %v\n", jsonPath, err)
			return 1
		}
	}
	if plotPath != "" {
		if err := benchmarks.Plot(plotPath, []*benchmarks.Record{rec}); err != nil {
			fmt.Fprintf(stderr, "rayd bench: plotting %s: %v\n", plotPath, err)
			return 1
		}
	}
	return 0
}

// cmdBenchSummarize reads records of repeated runs and prints the
// min/median/max of every row (the seed's stability table).
func cmdBenchSummarize(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench summarize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonPath := fs.String("json", "", "write the summary as JSON here")
	plotPath := fs.String("plot", "", "plot every run's points here (.png or .svg)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: rayd bench summarize [-json PATH] [-plot PATH] RECORD.json...")
		return 2
	}
	var recs []*benchmarks.Record
	for _, p := range fs.Args() {
		b, err := os.ReadFile(p)
		if err == nil {
			err = benchmarks.Validate(b)
		}
		var r benchmarks.Record
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			fmt.Fprintf(stderr, "rayd bench summarize: %s: %v\n", p, err)
			return 1
		}
		recs = append(recs, &r)
	}
	s := benchmarks.Summarize(recs)
	if err := s.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "rayd bench summarize: %v\n", err)
		return 1
	}
	if *jsonPath != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonPath, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "rayd bench summarize: %v\n", err)
			return 1
		}
	}
	if *plotPath != "" {
		if err := benchmarks.Plot(*plotPath, recs); err != nil {
			fmt.Fprintf(stderr, "rayd bench summarize: %v\n", err)
			return 1
		}
	}
	return 0
}

// cmdBenchPin adds (or refreshes) records in the benchmark manifest, run
// from the repository root: every record must validate; the manifest is
// then verified as a whole.
func cmdBenchPin(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench pin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	manifest := fs.String("manifest", benchmarks.ManifestPath, "the manifest, relative to the repository root")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: rayd bench pin [-manifest PATH] RECORD.json... (paths relative to the repository root)")
		return 2
	}
	m, err := benchmarks.ReadManifest(*manifest)
	if err != nil {
		fmt.Fprintf(stderr, "rayd bench pin: %v\n", err)
		return 1
	}
	for _, p := range fs.Args() {
		if err := m.Pin(".", p); err != nil {
			fmt.Fprintf(stderr, "rayd bench pin: %v\n", err)
			return 1
		}
	}
	if err := m.Verify("."); err != nil {
		fmt.Fprintf(stderr, "rayd bench pin: %v\n", err)
		return 1
	}
	if err := m.WriteFile(*manifest); err != nil {
		fmt.Fprintf(stderr, "rayd bench pin: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d records pinned\n", *manifest, len(m.Records))
	return 0
}

// parseDevices reads "0,1" (empty: nil, every visible device).
func parseDevices(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("bad -devices %q: want ordinals like 0,1", s)
		}
		out = append(out, v)
	}
	return out, nil
}
