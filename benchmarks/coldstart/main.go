// Command coldstart measures what a process pays before its first ray: in a
// fresh process per sample (the command re-executes itself, -n times per
// mode and kind), it times
//
//   - driver init: dlopen libcuda, cuInit and cuDeviceGet;
//   - context creation: cuDevicePrimaryCtxRetain and the first
//     cuCtxSetCurrent;
//   - module load, per CUDA module (digest checks, decompression of a cubin,
//     cuModuleLoadDataEx), from the embedded cubin of the device's
//     architecture or from the PTX (JIT);
//   - the BVH build of a small mesh (the first in the process, then a warm
//     one), with every module already loaded;
//   - the first NewScene + Intersect on that mesh (a 3,674-triangle cloud
//     of internal/workload and 65,536 rays by default), with the driver and
//     the context already up: what a user's first call costs on top of them,
//     and which modules each call loaded.
//
// Modes, each in its own children: cubin (RAYD_PTX_JIT=0), ptx-jit
// (RAYD_PTX_JIT=1 with the driver's JIT cache disabled: a first run ever)
// and ptx-jit-cached (RAYD_PTX_JIT=1 with a private JIT cache primed by one
// unrecorded run: any later run of a PTX-only install). The report carries
// the evidence head and records (never enforces) the target: the first
// NewScene + Intersect with cubins within 50 ms. Without a GPU it says why
// and exits 1.
//
//	coldstart -out benchmarks/results/coldstart-h200.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// configEnv carries the workload to a child, as JSON.
const configEnv = "RAYD_COLDSTART_CONFIG"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if kind := os.Getenv(childEnv); kind != "" {
		if err := childMain(ctx, kind, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "coldstart child:", err)
			os.Exit(1)
		}
		return
	}
	cfg := options{}
	flag.IntVar(&cfg.work.Device, "device", 0, "device ordinal")
	flag.IntVar(&cfg.samples, "n", 5, "samples (fresh processes) per mode and kind")
	flag.IntVar(&cfg.work.Triangles, "triangles", 3674, "triangles of the cloud mesh")
	flag.IntVar(&cfg.work.Rays, "rays", 1<<16, "rays of the first Intersect")
	modes := flag.String("modes", strings.Join(modeOrder, ","), "modes to measure, comma-separated")
	flag.Float64Var(&cfg.target, "target-ms", 50, "target of the first NewScene + Intersect with cubins (recorded, not enforced)")
	flag.StringVar(&cfg.out, "out", "", "write the JSON report here (default: print the table only)")
	flag.Parse()
	cfg.work.Edge = 0.05
	cfg.modes = strings.Split(*modes, ",")
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

// childMain is the body of a re-executed child: the workload from the
// environment, one kind measured, the result on w.
func childMain(ctx context.Context, kind string, w io.Writer) error {
	var cfg workloadConfig
	if err := json.Unmarshal([]byte(os.Getenv(configEnv)), &cfg); err != nil {
		return fmt.Errorf("%s: %w", configEnv, err)
	}
	return runChild(ctx, kind, cfg, w)
}

// options are the parent's flags.
type options struct {
	work    workloadConfig
	samples int
	modes   []string
	target  float64
	out     string
}

// validate checks the flags before any device is touched.
func (o options) validate() error {
	var errs []error
	if o.samples < 1 {
		errs = append(errs, fmt.Errorf("-n %d: at least one sample", o.samples))
	}
	if o.work.Triangles < 1 || o.work.Rays < 1 {
		errs = append(errs, fmt.Errorf("-triangles %d, -rays %d: both at least 1", o.work.Triangles, o.work.Rays))
	}
	if o.work.Device < 0 {
		errs = append(errs, fmt.Errorf("-device %d", o.work.Device))
	}
	if len(o.modes) == 0 {
		errs = append(errs, errors.New("-modes: none"))
	}
	for _, m := range o.modes {
		if _, ok := modeByName(m); !ok {
			errs = append(errs, fmt.Errorf("-modes: unknown mode %q (known: %s)", m, strings.Join(modeOrder, ", ")))
		}
	}
	return errors.Join(errs...)
}
