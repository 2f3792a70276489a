package accel

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
)

// BenchmarkTraversalStats prints per-ray traversal work on the two
// benchmark scene shapes for several build options (go test -run ^$ -bench
// TraversalStats ./accel; the compute scene takes a while on the CPU). It is
// the model behind the defaults in options.go: bytes per ray ≈ 64·nodes +
// 48·triangles (80·nodes for Width 8).
func BenchmarkTraversalStats(b *testing.B) {
	t := b
	nrays := 4000
	if v, err := strconv.Atoi(os.Getenv("RAYD_ACCEL_STATS_RAYS")); err == nil {
		nrays = v
	}
	type scene struct {
		name string
		tb   *geom.Tables
		rays []ray
	}
	var scenes []scene
	for _, cfg := range []workload.Config{workload.Light, workload.Compute} {
		mesh, o, d := cfg.Scaled(nrays).Build()
		sc := scene{name: cfg.Name, tb: tables(t, mesh)}
		for i := range len(o) / 3 {
			sc.rays = append(sc.rays, ray{[3]float32{o[3*i], o[3*i+1], o[3*i+2]}, [3]float32{d[3*i], d[3*i+1], d[3*i+2]}})
		}
		scenes = append(scenes, sc)
	}
	opts := []Options{{Width: 2}, {Width: 2, MaxLeafSize: 8, TraversalCost: 2}, {Width: 4}, {Width: 4, MaxLeafSize: 8, TraversalCost: 2}, {Width: 8}}
	for _, sc := range scenes {
		for _, opt := range opts {
			start := time.Now()
			opt, _ = opt.withDefaults()
			lay, err := BuildHost(sc.tb, opt)
			if err != nil {
				t.Fatal(err)
			}
			built := time.Since(start)
			var st TraceStats
			hits := 0
			for _, r := range sc.rays {
				if lay.Closest(r.o, r.d, geom.TMin, geom.DefaultTMax, &st).Prim >= 0 {
					hits++
				}
			}
			f := float64(st.Rays)
			t.Logf("%-8s width %d leaf %d Ct %.1f: nodes %7d height %2d | per ray: nodes %6.1f leaves %6.1f tris %6.1f bytes %7.0f maxstack %2d hit %.2f | host build %v",
				sc.name, opt.Width, opt.MaxLeafSize, opt.TraversalCost, lay.NumNodes, lay.Height,
				float64(st.Nodes)/f, float64(st.Leaves)/f, float64(st.Tris)/f,
				(4*float64(nodeWords(opt.Width))*float64(st.Nodes)+48*float64(st.Tris))/f, st.MaxStack, float64(hits)/f, built.Round(time.Millisecond))
		}
	}
}
