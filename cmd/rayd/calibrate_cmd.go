package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// cmdCalibrate builds a benchmark scene on every visible device (or
// -devices) and calibrates intersect and trace_reflections on it, printing
// describe() for each operation (and the records as JSON with -json).
func cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	f := newFlags("calibrate", "rayd calibrate [-config light|compute] [-devices 0,1] [-json PATH] [flags]", `
Builds a benchmark scene on every visible device (or -devices, two or more)
and calibrates intersect and trace_reflections on it: per-device probe
times, then the ladder of splits, printing describe() of each record. On a
terminal a progress bar with an ETA is drawn on stderr.`)
	config := f.String("config", "compute", "scene: light or compute")
	devices := f.String("devices", "", `device ordinals, master first ("0,1"); default every visible device`)
	rows := f.Int("rays", 0, "probe batch (0: the configuration's batch)")
	bounces := f.Int("bounces", -1, "trace_reflections bounces (-1: the configuration's)")
	repeats := f.Int("repeats", calibrate.DefaultRepeats, "measured rounds")
	mode := f.String("mode", string(calibrate.ModeNoiseAware), "noise-aware or rayd")
	jsonPath := f.String("json", "", "write the calibration records here")
	if code, done := f.parse(args, stdout, stderr); done {
		return code
	}
	if f.NArg() > 0 {
		return usageError(stderr, "calibrate", "unexpected argument %q", f.Arg(0))
	}
	if *rows < 0 || *repeats < 1 || *bounces > geom.MaxBounces {
		return usageError(stderr, "calibrate", "-rays must not be negative, -repeats must be at least 1 and -bounces at most %d", geom.MaxBounces)
	}
	if *mode != string(calibrate.ModeNoiseAware) && *mode != string(calibrate.ModeRayD) {
		return usageError(stderr, "calibrate", "unknown -mode %q (noise-aware or rayd)", *mode)
	}
	cfg, ok := workloadNamed(*config)
	if !ok {
		return usageError(stderr, "calibrate", "unknown -config %q (light or compute)", *config)
	}
	devs, err := parseDevices(*devices)
	if err != nil {
		return usageError(stderr, "calibrate", "%v", err)
	}
	if *bounces < 0 {
		*bounces = cfg.MaxBounces
	}
	if *rows == 0 {
		*rows = cfg.Rays
	}
	ctx := context.Background()
	mesh, _, _ := cfg.Scaled(1).Build()
	if devs == nil {
		n, err := launch.Count()
		if err != nil {
			fmt.Fprintf(stderr, "rayd calibrate: no usable GPU (%v): calibration needs two or more devices\n", err)
			return 1
		}
		for i := range n {
			devs = append(devs, i)
		}
	}
	if len(devs) < 2 {
		fmt.Fprintf(stderr, "rayd calibrate: %d device(s) %v: calibration needs two or more\n", len(devs), devs)
		return 1
	}
	opts := []rayd.Option{rayd.WithDevices(devs...)}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{mesh}, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "rayd calibrate: %v\n", err)
		return 1
	}
	defer s.Close()
	var recs []*rayd.CalibrationRecord
	for _, b := range []int{0, *bounces} {
		if b == 0 && len(recs) > 0 {
			continue
		}
		rec, err := s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Rows: *rows, MaxBounces: b,
			Repeats: *repeats, Mode: calibrate.Mode(*mode), Progress: calibrationProgress(stderr)}})
		if err != nil {
			fmt.Fprintf(stderr, "rayd calibrate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s\n\n", rec)
		recs = append(recs, rec)
	}
	if *jsonPath != "" {
		b, err := json.MarshalIndent(recs, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonPath, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "rayd calibrate: %v\n", err)
			return 1
		}
	}
	return 0
}
