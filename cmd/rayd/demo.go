package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/workload"
)

// cmdDemo builds one of the benchmark scenes, traces a batch of rays on the
// best backend available and prints what it got: on a laptop without a GPU
// it runs the CPU reference (and says so loudly).
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	f := newFlags("demo", "rayd demo [-config light|compute] [-rays N] [-backend auto|cuda|optix|cpu] [-device N]", `
Builds one of the benchmark scenes, traces a batch of rays on the best
backend available (or -backend) and prints what it got: the build time,
the intersect time and throughput, and the hit count. Without a GPU it runs
the CPU reference and says so.`)
	config := f.String("config", "light", "scene: light (72,962-triangle grid) or compute (2.1M-triangle cloud)")
	rays := f.Int("rays", 1<<20, "rays to trace")
	backend := f.String("backend", "auto", "auto, cuda, optix or cpu")
	device := f.Int("device", 0, "CUDA device ordinal")
	if code, done := f.parse(args, stdout, stderr); done {
		return code
	}
	if f.NArg() > 0 {
		return usageError(stderr, "demo", "unexpected argument %q", f.Arg(0))
	}
	cfg, ok := workloadNamed(*config)
	if !ok {
		return usageError(stderr, "demo", "unknown config %q (light or compute)", *config)
	}
	if *rays < 1 {
		return usageError(stderr, "demo", "-rays must be at least 1")
	}
	switch rayd.Backend(*backend) {
	case rayd.BackendAuto, rayd.BackendCUDA, rayd.BackendOptiX, rayd.BackendCPU:
	default:
		return usageError(stderr, "demo", "unknown -backend %q (auto, cuda, optix or cpu)", *backend)
	}
	mesh, o, d := cfg.Scaled(*rays).Build()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	t0 := time.Now()
	s, err := rayd.NewScene(ctx, []rayd.Mesh{mesh}, rayd.WithBackend(rayd.Backend(*backend)), rayd.WithDevice(*device), rayd.WithLogger(log))
	if err != nil {
		fmt.Fprintf(stderr, "rayd demo: %v\n", err)
		return 1
	}
	defer s.Close()
	build := time.Since(t0)
	where := fmt.Sprintf("CUDA device %d", s.Device())
	if s.Backend() == rayd.BackendCPU {
		where = "the CPU REFERENCE (no usable GPU: this is the slow fallback)"
	}
	fmt.Fprintf(stdout, "%s: %d triangles, %d rays, traced on %s\n", cfg.Name, s.NumFaces(), len(o)/3, where)
	r := rayd.Rays{Origins: o, Directions: d}
	if _, err := s.Intersect(ctx, r, rayd.FlagsAll); err != nil { // warm-up
		fmt.Fprintf(stderr, "rayd demo: %v\n", err)
		return 1
	}
	t1 := time.Now()
	hits, err := s.Intersect(ctx, r, rayd.FlagsAll)
	if err != nil {
		fmt.Fprintf(stderr, "rayd demo: %v\n", err)
		return 1
	}
	el := time.Since(t1)
	n, hit := hits.Len(), 0
	sumT := 0.0
	for i := 0; i < n; i++ {
		if !math.IsInf(float64(hits.T[i]), 1) {
			hit++
			sumT += float64(hits.T[i])
		}
	}
	fmt.Fprintf(stdout, "scene build %v; intersect (76 B/row, host round trip included) %v = %.1f Mrays/s\n",
		build.Round(time.Microsecond), el.Round(time.Microsecond), float64(n)/el.Seconds()/1e6)
	mean := 0.0
	if hit > 0 {
		mean = sumT / float64(hit)
	}
	fmt.Fprintf(stdout, "hits: %d of %d rays (%.1f%%), mean t %.4f\n", hit, n, 100*float64(hit)/float64(n), mean)
	return 0
}

// workloadNamed is the benchmark configuration called name (light or
// compute).
func workloadNamed(name string) (workload.Config, bool) {
	switch name {
	case workload.Light.Name:
		return workload.Light, true
	case workload.Compute.Name:
		return workload.Compute, true
	}
	return workload.Config{}, false
}
