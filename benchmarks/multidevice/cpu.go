package multidevice

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
)

// CPUDefaultRays and CPUDefaultSamples are the batch and the sample count
// of RunCPU unless Options.Rays and Options.AccumSamples replace them: the
// light grid with a small batch, so that the reference answers in well
// under a second.
const (
	CPUDefaultRays    = 1 << 14
	CPUDefaultSamples = 1 << 13
)

// RunCPU runs the CPU reference on the light configuration's grid with a
// small built-in batch (no GPU needed): intersect, trace_reflections and
// accum_dfr_direct on one "device", timed with the host clock. It is what
// `rayd bench` runs on a machine without an NVIDIA driver. It honours
// Rays, AccumSamples, AccumOnly, Warmup, Repeat and Commit; the options it
// cannot honour without a GPU (a compute configuration, Devices, the
// calibration knobs) are the caller's to refuse.
func RunCPU(ctx context.Context, o Options) (*benchmarks.Record, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	nRays, samples := CPUDefaultRays, CPUDefaultSamples
	if o.Rays > 0 {
		nRays = o.Rays
	}
	if o.AccumSamples > 0 {
		samples = o.AccumSamples
	}
	cfg := workload.Light.Scaled(nRays)
	cfg.AccumSamples = samples
	mesh, org, dir := cfg.Build()
	s, err := rayd.NewScene(ctx, []rayd.Mesh{mesh}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rays := rayd.Rays{Origins: org, Directions: dir}
	rows := func(batch string, n int, fn func() error) (*benchmarks.Row, error) {
		t, err := hostRounds(o.Warmup, o.Repeat, fn)
		if err != nil {
			return nil, err
		}
		row := &benchmarks.Row{Batch: batch, SingleMS: slices.Min(t), SingleRoundsMS: t, Dispatch: "single-device"}
		if n > 0 {
			row.NsPerRaySingle = row.SingleMS * 1e6 / float64(n)
		}
		return row, nil
	}
	conf := benchmarks.Config{Note: "CPU reference: " + cfg.Note, Triangles: cfg.Triangles(), Rays: cfg.Rays, MaxBounces: cfg.MaxBounces}
	batch := fmt.Sprintf("%d rays", nRays)
	if !o.AccumOnly {
		if conf.Intersect, err = rows(batch, nRays, func() error { _, err := s.Intersect(ctx, rays, rayd.FlagsAll); return err }); err != nil {
			return nil, err
		}
		if conf.TraceReflections, err = rows(batch, nRays, func() error {
			_, err := s.TraceReflections(ctx, rays, cfg.MaxBounces)
			return err
		}); err != nil {
			return nil, err
		}
	}
	tri, st, g := testscene.AccumFixture()
	acc, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		return nil, err
	}
	defer acc.Close()
	opt := testscene.AccumOptions(samples)
	if conf.AccumDfrDirect, err = rows(fmt.Sprintf("%d samples", samples), 0, func() error {
		_, err := acc.AccumDfrDirect(ctx, st, g, nil, nil, opt)
		return err
	}); err != nil {
		return nil, err
	}
	conf.AccumDfrDirect.DirectSamples = samples
	f := false
	return &benchmarks.Record{
		SchemaVersion: benchmarks.SchemaVersion, Benchmark: benchmarks.BenchmarkName,
		Provenance: benchmarks.Provenance{Kind: benchmarks.ProvenanceLive, GeneratedAt: time.Now().UTC().Format(time.RFC3339), Commit: o.Commit},
		Parameters: benchmarks.Parameters{SelectedConfigs: []string{cfg.Name}, Warmup: o.Warmup, Repeat: o.Repeat,
			CalibrationRays: o.CalibrationRays, CalibrationRepeats: o.CalibrationRepeats, AccumOnly: o.AccumOnly,
			Rays: nRays, AccumSamples: samples, Backend: string(rayd.BackendCPU)},
		Machine: benchmarks.Machine{DeviceCount: 1, Devices: []benchmarks.DeviceInfo{{Index: 0, Name: "CPU reference (" + runtime.GOARCH + ")"}},
			Go: runtime.Version(), CUDA: "none",
			PeerAccess: benchmarks.PeerAccess{Status: benchmarks.PeerNotApplicable, AllPairsAccessible: &f, Pairs: []benchmarks.PeerPair{}}},
		Configs: map[string]benchmarks.Config{cfg.Name: conf},
	}, nil
}

// hostRounds runs fn warmup times, then repeat timed times (host clock, ms).
func hostRounds(warmup, repeat int, fn func() error) ([]float64, error) {
	for range warmup {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	var out []float64
	for range repeat {
		t0 := time.Now()
		if err := fn(); err != nil {
			return nil, err
		}
		out = append(out, float64(time.Since(t0).Nanoseconds())/1e6)
	}
	return out, nil
}
