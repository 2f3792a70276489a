// Command overhead measures the fixed cost of the replicated multi-device
// layer on one GPU: every row times a call on a single-device CUDA scene
// and the same call on a replicated scene of two replicas on that same
// device (WithDevices(d, d), AllowSameDevice, weights [0.5, 0.5], the
// layer's default floors), so the replicated call does the same GPU work
// plus everything the layer adds (planning, the remote's launch, events,
// the fold of its results). The difference of the two is the layer's
// overhead.
//
// The rows use the configurations of `rayd bench`: on the light grid,
// intersect (the full record), trace_reflections(1) and visible on
// device-resident rays and outputs (IntersectInto, TraceReflectionsInto,
// VisibleInto: the fast path a multi-GPU user times) and accum_dfr_direct
// with 8,192 samples; on the compute cloud, intersect and accum_dfr_direct
// with 67,108,864 samples. Both calls of a row are timed in the same
// rounds, interleaved, after warm-up rounds, with CUDA events on a stream of
// the device around a call that returns once its results are in place; the
// row reports the median and the minimum of each, and the overhead of both
// statistics. The driver calls of the replicated call are read from its
// dispatch record and counted around one call of each scene
// (driver.CallCounts: the single-device count is the baseline).
//
// Each row is then checked on the configuration it timed: the outputs of
// both scenes are poisoned with different patterns, one call of each runs,
// and every field of every row of the replicated result must be bitwise
// the single-device one (a row left poisoned counts as a failure); the
// accumulation's counters must be equal and its grids within 1e-6 relative
// L2. The targets of the multi-device specification (overhead and driver
// calls per call) are recorded and printed as met or missed; a missed
// target is not a failure, a correctness failure is (exit 1, after the
// evidence is written). Without a CUDA device it says so and exits 1,
// writing nothing.
//
//	overhead -out benchmarks/results/overhead-1gpu.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/shard"
)

// options are the command's flags.
type options struct {
	out           string
	ordinal       int
	config        string
	warmup        int
	lightRounds   int
	computeRounds int
	transfer      string
}

// errUsage marks options the command refuses.
var errUsage = errors.New("overhead: invalid options")

func main() {
	var o options
	flag.StringVar(&o.out, "out", "benchmarks/results/overhead-1gpu.json", "JSON evidence path")
	flag.IntVar(&o.ordinal, "device", 0, "device ordinal")
	flag.StringVar(&o.config, "config", "", "light or compute (default both)")
	flag.IntVar(&o.warmup, "warmup", 3, "warm-up rounds per row")
	flag.IntVar(&o.lightRounds, "light-rounds", 31, "timed rounds of the light rows")
	flag.IntVar(&o.computeRounds, "compute-rounds", 11, "timed rounds of the compute rows")
	flag.StringVar(&o.transfer, "transfer", "", "force the transfer path: peer-direct, compact or copy (default: the layer chooses)")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

// validate refuses what the benchmark cannot run.
func (o options) validate() error {
	if _, err := configs(o.config); err != nil {
		return err
	}
	if o.ordinal < 0 || o.warmup < 0 || o.lightRounds < 1 || o.computeRounds < 1 {
		return fmt.Errorf("%w: device %d, warm-up %d, rounds %d and %d (rounds must be at least 1)",
			errUsage, o.ordinal, o.warmup, o.lightRounds, o.computeRounds)
	}
	switch shard.Transfer(o.transfer) {
	case shard.TransferAuto, shard.TransferPeerDirect, shard.TransferCompact, shard.TransferCopy:
	default:
		return fmt.Errorf("%w: transfer %q (peer-direct, compact or copy)", errUsage, o.transfer)
	}
	return nil
}

// configs are the configurations selected by name ("" for both).
func configs(name string) ([]workload.Config, error) {
	switch name {
	case "":
		return []workload.Config{workload.Light, workload.Compute}, nil
	case workload.Light.Name:
		return []workload.Config{workload.Light}, nil
	case workload.Compute.Name:
		return []workload.Config{workload.Compute}, nil
	}
	return nil, fmt.Errorf("%w: configuration %q (light or compute)", errUsage, name)
}

// newReport is the evidence of a run before its rows.
func newReport(h benchhead.Header, o options) *report {
	transfer := o.transfer
	if transfer == "" {
		transfer = "auto"
	}
	return &report{Header: h, Mode: "same-device replicas [d, d] vs single device", Weights: weights,
		Transfer: transfer, Statistic: statistic + " of interleaved rounds after warm-up (minimum kept)",
		Warmup: o.warmup, Rows: []row{}, Missed: []string{}, Failures: []string{}}
}

// add appends a row and its missed targets and correctness failure.
func (rep *report) add(r row) {
	rep.Rows = append(rep.Rows, r)
	rep.Missed = append(rep.Missed, r.missed()...)
	if !r.Check.Pass {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%s %s: %d rows differ, %d left poisoned, counters equal %v, grid rel L2 %v",
			r.Config, r.Op, r.Check.RowsMismatched, r.Check.RowsPoisoned, deref(r.Check.CountersEqual), deref(r.Check.GridRelL2)))
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "n/a"
	}
	return *p
}

func run(ctx context.Context, w io.Writer, o options) error {
	h, err := benchhead.New(o.ordinal)
	if err != nil {
		return fmt.Errorf("no CUDA device %d (this benchmark needs an NVIDIA GPU and its driver; nothing was measured or written): %w", o.ordinal, err)
	}
	clk, err := benchhead.NewClock([]int{o.ordinal})
	if err != nil {
		return err
	}
	defer clk.Close()
	rep := newReport(h, o)
	fmt.Fprintf(w, "# replicated-layer overhead on %s (cuda:%d), driver %d, build %s\n", h.Device.Name, o.ordinal, h.Driver, h.Build)
	fmt.Fprintf(w, "# %s, weights %v, transfer %s; %s; %d warm-up rounds\n", rep.Mode, weights, rep.Transfer, rep.Statistic, o.warmup)
	b := &bench{clk: clk, ordinal: o.ordinal, warmup: o.warmup, transfer: shard.Transfer(o.transfer)}
	cs, _ := configs(o.config)
	for _, cfg := range cs {
		rounds := o.lightRounds
		if cfg.Name == workload.Compute.Name {
			rounds = o.computeRounds
		}
		rows, err := b.config(ctx, cfg, rounds)
		if err != nil {
			return err
		}
		for _, r := range rows {
			rep.add(r)
		}
	}
	writeTable(w, rep.Rows)
	if err := benchhead.WriteJSON(o.out, rep); err != nil {
		return err
	}
	fmt.Fprintln(w, summary(rep))
	fmt.Fprintln(w, "evidence in", o.out)
	if len(rep.Failures) > 0 {
		return fmt.Errorf("%d correctness failures", len(rep.Failures))
	}
	return nil
}
