package multidevice

import (
	"context"
	"fmt"
	"math"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ptx"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

func ptxManifestDigest() (string, error) { return ptx.ManifestSHA256() }

// gridTolerance bounds the relative grid deviation of a merged
// accumulation: equality holds up to float32 summation order only.
const gridTolerance = 1e-5

// accum measures accum_dfr_direct on the §10.1 fixture: one device against
// every device count (lane-sharded), the merged power grid against the
// single launch's, then with two or more devices a calibrated row.
func (r *configRun) accum(ctx context.Context) (row, cal *benchmarks.Row, err error) {
	tri, st, g := testscene.AccumFixture()
	opt := testscene.AccumOptions(r.cfg.AccumSamples)
	var scenes []*rayd.Scene
	defer func() {
		for _, s := range scenes {
			_ = s.Close()
		}
	}()
	single, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(r.devs[0]))
	if err != nil {
		return nil, nil, err
	}
	scenes = append(scenes, single)
	for _, k := range r.counts() {
		s, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithDevices(r.devs[:k]...))
		if err != nil {
			return nil, nil, err
		}
		scenes = append(scenes, s)
	}
	r.o.logf("%s: accum_dfr_direct, %d samples", r.cfg.Name, opt.DirectSamples)
	batch := fmt.Sprintf("%d samples", opt.DirectSamples)
	measure := func(scenes []*rayd.Scene) (*benchmarks.Row, error) {
		results := make([]*rf.AccumResult, len(scenes))
		fns := make([]func() error, len(scenes))
		for i, s := range scenes {
			fns[i] = func() error {
				res, err := s.AccumDfrDirect(ctx, st, g, nil, nil, opt)
				results[i] = res
				return err
			}
		}
		times, err := interleaved(r.c, r.o.Warmup, r.o.Repeat, fns...)
		if err != nil {
			return nil, err
		}
		row := r.newRow(times[0], batch, 0)
		row.DirectSamples = opt.DirectSamples
		for i := 1; i < len(scenes); i++ {
			dev := relDeviation(results[0].Power, results[i].Power)
			if results[i].DirectCount != results[0].DirectCount || dev > gridTolerance {
				return nil, fmt.Errorf("%w: accum_dfr_direct on %d devices: counters %d vs %d, relative grid deviation %.3g",
					ErrMismatch, len(scenes[i].Devices()), results[i].DirectCount, results[0].DirectCount, dev)
			}
			r.addMulti(row, scenes[i], times[i], i == len(scenes)-1)
			if i == len(scenes)-1 {
				row.RelativeGridDeviation = &dev
			}
		}
		return row, nil
	}
	if row, err = measure(scenes); err != nil || len(scenes) < 2 {
		return row, nil, err
	}
	full := scenes[len(scenes)-1]
	r.o.logf("%s: calibrating accum_dfr_direct", r.cfg.Name)
	probe := full.NewProbe(func(ctx context.Context, on *rayd.Scene) error {
		_, err := on.AccumDfrDirect(ctx, st, g, nil, nil, opt)
		return err
	})
	rec, err := full.Calibrate(ctx, rayd.CalibrateOptions{Probe: probe, Options: calibrate.Options{
		Operation: shard.OpAccumDfrDirect, Rows: opt.DirectSamples, Repeats: r.o.CalibrationRepeats,
		Mode: r.o.CalibrationMode, Progress: r.o.CalibrationProgress}})
	if err != nil {
		return nil, nil, fmt.Errorf("calibrating accum_dfr_direct: %w", err)
	}
	if cal, err = measure([]*rayd.Scene{single, full}); err != nil {
		return nil, nil, err
	}
	calibrated(cal, rec)
	return row, cal, nil
}

// relDeviation is Σ|got − want| / Σ|want| (0 when Σ|want| = 0).
func relDeviation(want, got []float64) float64 {
	var num, den float64
	for i := range want {
		num += math.Abs(got[i] - want[i])
		den += math.Abs(want[i])
	}
	if den == 0 {
		return 0
	}
	return num / den
}
