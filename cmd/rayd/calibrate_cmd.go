package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/launch"
)

// cmdCalibrate builds a benchmark scene on every visible device (or
// -devices) and calibrates intersect and trace_reflections on it, printing
// describe() for each operation (and the records as JSON with -json).
func cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "compute", "scene: light or compute")
	devices := fs.String("devices", "", `device ordinals, master first ("0,1"); default every visible device`)
	rows := fs.Int("rays", 0, "probe batch (0: the configuration's batch)")
	bounces := fs.Int("bounces", -1, "trace_reflections bounces (-1: the configuration's)")
	repeats := fs.Int("repeats", calibrate.DefaultRepeats, "measured rounds")
	mode := fs.String("mode", string(calibrate.ModeNoiseAware), "noise-aware or rayd")
	jsonPath := fs.String("json", "", "write the calibration records here")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := workloadNamed(*config)
	if !ok {
		fmt.Fprintf(stderr, "rayd calibrate: unknown -config %q\n", *config)
		return 2
	}
	devs, err := parseDevices(*devices)
	if err != nil {
		fmt.Fprintf(stderr, "rayd calibrate: %v\n", err)
		return 2
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
			Repeats: *repeats, Mode: calibrate.Mode(*mode)}})
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
