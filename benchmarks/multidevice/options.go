package multidevice

import (
	"fmt"
	"io"

	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/internal/workload"
)

// Options are the benchmark's parameters (the CLI flags of spec §10.7).
type Options struct {
	// Configs are the configurations to run, "light" and/or "compute";
	// nil runs both.
	Configs []string
	// Devices are the device ordinals, master first; nil means every
	// visible device.
	Devices []int
	// Rays and AccumSamples replace the configurations' batch and sample
	// count when positive.
	Rays, AccumSamples int
	// AccumOnly skips the per_ray rows.
	AccumOnly bool
	// Warmup and Repeat are the discarded and the timed rounds (2 and 7
	// when zero; set NoWarmup for none).
	Warmup, Repeat int
	NoWarmup       bool
	// CalibrationRays is the probe batch (0: the configuration's batch);
	// CalibrationRepeats the measured calibration rounds (0: 3).
	CalibrationRays, CalibrationRepeats int
	// CalibrationMode is calibrate.ModeNoiseAware (default) or ModeRayD.
	CalibrationMode calibrate.Mode
	// Commit is recorded in the provenance when set.
	Commit string
	// Log receives progress lines; nil is quiet.
	Log io.Writer
	// Progress, when set, is called as each stage of the run starts (on
	// the benchmarking goroutine): a command renders it, for instance as a
	// progress bar with an ETA on a terminal.
	Progress func(Stage)
	// CalibrationProgress is handed to every calibration of the run
	// (calibrate.Options.Progress).
	CalibrationProgress func(calibrate.ProgressUpdate)

	stages *stageCounter // set by Run: the stage count of this run
}

// Stage is one step of a benchmark run: the Done-th of Total stages (Done
// counts from 1), What it measures ("light: intersect").
type Stage struct {
	Done, Total int
	What        string
}

// stageCounter numbers the stages of one run.
type stageCounter struct{ done, total int }

// plannedStages is the number of stages Run logs: one to measure the
// machine, then per configuration the per_ray stages (building, intersect,
// trace_reflections, and with two or more devices their calibrations and
// the offload row) and the accumulation stages (the row, and with two or
// more devices its calibration).
func plannedStages(o Options, devices int) int {
	perConfig := 1
	if !o.AccumOnly {
		perConfig += 3
	}
	if devices >= 2 {
		perConfig++
		if !o.AccumOnly {
			perConfig += 3
		}
	}
	return 1 + len(o.Configs)*perConfig
}

func (o Options) withDefaults() (Options, error) {
	if o.Configs == nil {
		o.Configs = []string{workload.Light.Name, workload.Compute.Name}
	}
	for _, c := range o.Configs {
		if _, err := configNamed(c); err != nil {
			return o, err
		}
	}
	if o.Warmup < 0 || o.Repeat < 0 || o.Rays < 0 || o.AccumSamples < 0 || o.CalibrationRays < 0 || o.CalibrationRepeats < 0 {
		return o, fmt.Errorf("%w: counts must not be negative", ErrInvalidOptions)
	}
	if o.Warmup == 0 && !o.NoWarmup {
		o.Warmup = 2
	}
	if o.Repeat == 0 {
		o.Repeat = 7
	}
	if o.CalibrationRepeats == 0 {
		o.CalibrationRepeats = calibrate.DefaultRepeats
	}
	if o.CalibrationMode == "" {
		o.CalibrationMode = calibrate.ModeNoiseAware
	}
	return o, nil
}

func configNamed(name string) (workload.Config, error) {
	switch name {
	case workload.Light.Name:
		return workload.Light, nil
	case workload.Compute.Name:
		return workload.Compute, nil
	}
	return workload.Config{}, fmt.Errorf("%w: unknown configuration %q (light or compute)", ErrInvalidOptions, name)
}

// logf starts a stage: a progress line on Log and a Stage for Progress.
func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
	if o.Progress != nil && o.stages != nil {
		o.stages.done++
		o.stages.total = max(o.stages.total, o.stages.done)
		o.Progress(Stage{Done: o.stages.done, Total: o.stages.total, What: fmt.Sprintf(format, args...)})
	}
}
