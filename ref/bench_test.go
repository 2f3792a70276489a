package ref

import (
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
)

func benchScene(b *testing.B, cfg workload.Config) (*Scene, []float32, []float32) {
	b.Helper()
	mesh, o, d := cfg.Build()
	tb, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewScene(tb)
	if err != nil {
		b.Fatal(err)
	}
	return s, o, d
}

func BenchmarkIntersectLight(b *testing.B) {
	s, o, d := benchScene(b, workload.Light.Scaled(1<<16))
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Intersect(o, d, nil, nil, geom.FlagsAll); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(o)/3*b.N)/b.Elapsed().Seconds(), "rays/s")
}

func BenchmarkReflectionsCompute(b *testing.B) {
	cfg := workload.Compute.Scaled(1 << 14)
	cfg.Size = 1 << 16
	s, o, d := benchScene(b, cfg)
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.TraceReflections(o, d, nil, nil, cfg.MaxBounces); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(o)/3*b.N)/b.Elapsed().Seconds(), "rays/s")
}

func BenchmarkBuildLight(b *testing.B) {
	mesh, _, _ := workload.Light.Scaled(0).Build()
	tb, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := NewScene(tb); err != nil {
			b.Fatal(err)
		}
	}
}
