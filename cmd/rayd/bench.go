package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/benchmarks/multidevice"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/buildinfo"
	"github.com/rayd-go/rayd/launch"
)

// benchDescription is the help text of `rayd bench`.
const benchDescription = `
Runs the multi-device benchmark (multidevice spec §10): intersect,
trace_reflections and accum_dfr_direct on one GPU and on every device count
up to all of them, the calibrated rows and the chunked + offload row, with a
correctness check of every multi-device result against one device. It
prints the table (with -json -, on stderr: stdout then carries only the
JSON record), and writes the schema-validated JSON record and the speedup
plot when asked. On a terminal a progress bar with an ETA is drawn on
stderr; elsewhere progress lines go to stderr unless -quiet.

Without an NVIDIA driver it runs the CPU reference on the light grid
(16,384 rays and 8,192 samples unless -rays and -accum-samples say
otherwise), says so on stderr, and exits 0. The CPU reference honours
-config light|all, -rays, -accum-samples, -accum-only, -warmup, -repeat,
-json, -commit and -quiet; it refuses (exit status 2) -config compute,
-devices, the -calibration-* flags and -plot, which need GPUs.

Subcommands: rayd bench summarize (min/median/max over repeated runs),
rayd bench pin (add records to the benchmark manifest).`

// benchFlags are the parsed flags of `rayd bench`.
type benchFlags struct {
	o        multidevice.Options
	jsonPath string
	plotPath string
	quiet    bool
	set      map[string]bool // the flags given on the command line
}

// cmdBench runs the multi-device benchmark, or its summarize and pin
// subcommands.
func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "summarize" {
		return cmdBenchSummarize(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "pin" {
		return cmdBenchPin(args[1:], stdout, stderr)
	}
	bf, code, done := parseBench(args, stdout, stderr)
	if done {
		return code
	}
	// With -json - stdout carries the record alone.
	out := stdout
	if bf.jsonPath == "-" {
		out = stderr
	}
	ctx := context.Background()
	rec, code := runBench(ctx, bf, stderr)
	if rec == nil {
		return code
	}
	return emitRecord(rec, bf.jsonPath, bf.plotPath, out, stdout, stderr)
}

// parseBench parses and checks the flags of `rayd bench`.
func parseBench(args []string, stdout, stderr io.Writer) (bf benchFlags, code int, done bool) {
	f := newFlags("bench", "rayd bench [-config light|compute|all] [-devices 0,1] [-json PATH|-] [-plot PATH] [flags]", benchDescription)
	config := f.String("config", "all", "configuration: light, compute or all")
	devices := f.String("devices", "", `device ordinals, master first ("0,1"); default every visible device`)
	rays := f.Int("rays", 0, "replace the configurations' batch (rays)")
	samples := f.Int("accum-samples", 0, "replace the configurations' accum_dfr_direct sample count")
	accumOnly := f.Bool("accum-only", false, "skip the per_ray rows")
	warmup := f.Int("warmup", 2, "discarded rounds")
	repeat := f.Int("repeat", 7, "timed rounds (the minimum is reported)")
	f.IntVar(repeat, "rounds", 7, "alias of -repeat")
	calRays := f.Int("calibration-rays", 0, "calibration probe batch (0: the configuration's batch)")
	calRepeats := f.Int("calibration-repeats", 3, "measured calibration rounds")
	calMode := f.String("calibration-mode", string(calibrate.ModeNoiseAware), "noise-aware or rayd")
	f.StringVar(&bf.jsonPath, "json", "", "write the validated JSON record here (- for stdout, which then carries nothing else)")
	f.StringVar(&bf.plotPath, "plot", "", "write the speedup plot here (.png or .svg)")
	commit := f.String("commit", "", "commit to record in the provenance (default: the commit the binary was built from)")
	f.BoolVar(&bf.quiet, "quiet", false, "no progress on stderr")
	if code, done := f.parse(args, stdout, stderr); done {
		return bf, code, true
	}
	if f.NArg() > 0 {
		return bf, usageError(stderr, "bench", "unexpected argument %q (subcommands: summarize, pin)", f.Arg(0)), true
	}
	bf.set = map[string]bool{}
	f.Visit(func(fl *flag.Flag) { bf.set[fl.Name] = true })
	if *commit == "" {
		*commit = recordCommit()
	}
	bf.o = multidevice.Options{Rays: *rays, AccumSamples: *samples, AccumOnly: *accumOnly, Warmup: *warmup, NoWarmup: *warmup == 0,
		Repeat: *repeat, CalibrationRays: *calRays, CalibrationRepeats: *calRepeats, CalibrationMode: calibrate.Mode(*calMode), Commit: *commit}
	switch *config {
	case "all":
	case "light", "compute":
		bf.o.Configs = []string{*config}
	default:
		return bf, usageError(stderr, "bench", "unknown -config %q (light, compute or all)", *config), true
	}
	if *calMode != string(calibrate.ModeNoiseAware) && *calMode != string(calibrate.ModeRayD) {
		return bf, usageError(stderr, "bench", "unknown -calibration-mode %q (noise-aware or rayd)", *calMode), true
	}
	if *rays < 0 || *samples < 0 || *warmup < 0 || *repeat < 1 || *calRays < 0 || *calRepeats < 1 {
		return bf, usageError(stderr, "bench", "counts must not be negative, and -repeat and -calibration-repeats must be at least 1"), true
	}
	var err error
	if bf.o.Devices, err = parseDevices(*devices); err != nil {
		return bf, usageError(stderr, "bench", "%v", err), true
	}
	return bf, exitOK, false
}

// recordCommit is the commit benchmark records carry by default: the
// binary's build stamp ("<sha>" or "<sha>+dirty"), empty when unknown.
func recordCommit() string {
	s := buildinfo.Get()
	if s.Commit == "" || s.Commit == "unknown" {
		return ""
	}
	return s.String()
}

// cpuRefusals names the flags given that the CPU reference cannot honour.
func cpuRefusals(bf benchFlags) []string {
	var out []string
	if len(bf.o.Configs) == 1 && bf.o.Configs[0] == "compute" {
		out = append(out, "-config compute (the CPU reference runs the light grid only)")
	}
	if bf.set["devices"] {
		out = append(out, "-devices (there is no device)")
	}
	for _, name := range []string{"calibration-rays", "calibration-repeats", "calibration-mode"} {
		if bf.set[name] {
			out = append(out, "-"+name+" (calibration needs two or more GPUs)")
		}
	}
	if bf.plotPath != "" {
		out = append(out, "-plot (the plot shows speedups over one GPU; a CPU run has none)")
	}
	return out
}

// runBench runs on the GPUs, or on the CPU reference when no driver loads.
// Notices go to stderr. A nil record comes with the exit status.
func runBench(ctx context.Context, bf benchFlags, stderr io.Writer) (*benchmarks.Record, int) {
	n, err := launch.Count()
	if err != nil && !errors.Is(err, driver.ErrNoDriver) && !errors.Is(err, driver.ErrNoDevice) {
		return nil, failure(stderr, "bench", err)
	}
	o := bf.o
	if err != nil || n == 0 {
		if refused := cpuRefusals(bf); len(refused) > 0 {
			why := "no CUDA device is visible"
			if err != nil {
				why = err.Error()
			}
			return nil, usageError(stderr, "bench", "no usable GPU (%s); the CPU reference cannot honour:\n  %s",
				why, strings.Join(refused, "\n  "))
		}
		if !bf.quiet {
			o.Log = stderr
		}
		noticeCPU(stderr, err, o)
		rec, err := multidevice.RunCPU(ctx, o)
		if err != nil {
			return nil, failure(stderr, "bench", err)
		}
		return rec, exitOK
	}
	var bar *benchBar
	switch {
	case bf.quiet:
	case isTerminal(stderr):
		bar = &benchBar{w: stderr}
		o.Progress, o.CalibrationProgress = bar.stageStarted, bar.calibration
	default:
		o.Log = stderr
	}
	rec, err := multidevice.Run(ctx, o)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return nil, failure(stderr, "bench", err)
	}
	if rec.Machine.DeviceCount == 1 {
		fmt.Fprintln(stderr, "rayd bench: one device: single-device numbers only (no calibrated or offload rows)")
	}
	return rec, exitOK
}

// noticeCPU says, on stderr, that the CPU reference runs instead.
func noticeCPU(stderr io.Writer, cause error, o multidevice.Options) {
	why := "no CUDA device is visible"
	if cause != nil {
		why = cause.Error()
	}
	rays, samples := multidevice.CPUDefaultRays, multidevice.CPUDefaultSamples
	if o.Rays > 0 {
		rays = o.Rays
	}
	if o.AccumSamples > 0 {
		samples = o.AccumSamples
	}
	fmt.Fprintf(stderr, "rayd bench: no usable GPU (%s)\n", why)
	fmt.Fprintf(stderr, "rayd bench: ran the CPU REFERENCE on the light grid instead (%d rays, %d samples); these are not GPU numbers\n",
		rays, samples)
}

// emitRecord validates the record, prints the table on table and writes
// the JSON record (on stdout for "-") and the plot; any failure is a
// non-zero exit.
func emitRecord(rec *benchmarks.Record, jsonPath, plotPath string, table, stdout, stderr io.Writer) int {
	if err := rec.Validate(); err != nil {
		return failure(stderr, "bench", fmt.Errorf("the record does not match its schema: %w", err))
	}
	if err := benchmarks.WriteTable(table, rec); err != nil {
		return failure(stderr, "bench", err)
	}
	switch jsonPath {
	case "":
	case "-":
		if code := writeJSON(stdout, stderr, "bench", rec); code != exitOK {
			return code
		}
	default:
		if err := benchmarks.WriteRecord(jsonPath, rec); err != nil {
			return failure(stderr, "bench", fmt.Errorf("writing %s: %w", jsonPath, err))
		}
	}
	if plotPath != "" {
		if err := benchmarks.Plot(plotPath, []*benchmarks.Record{rec}); err != nil {
			return failure(stderr, "bench", fmt.Errorf("plotting %s: %w", plotPath, err))
		}
	}
	return exitOK
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
