// Command closest benchmarks the GPU closest-point query
// (accel.BVH.ClosestPoint, what Scene.ClosestPoint runs on a CUDA scene)
// on one device: by default on the "compute" mesh, the 2,097,152-triangle
// cloud, with 4,194,304 query points uniform in the mesh's bounding box
// (-config light for the 72,962-triangle grid too).
//
// It times, with CUDA events on device-resident points and outputs, the
// persistent BVH walk over the device-built BVH (accel.Build, its node
// layout chosen per scene as a CUDA scene does), after warm-up rounds, and
// reports the median and minimum against the -target (15 ms).
//
// Correctness of the timed configuration: the outputs are poisoned (a NaN
// payload, an impossible id) before a checked run of the same launch;
// every row still holding its poison is counted, a random sample of -check
// rows is compared bit for bit with the CPU reference (ref.Scene.ClosestPoints
// over its BVH) and the first -brute-rows rows with the device brute-force
// kernel. Any mismatch or unwritten row fails the run.
//
//	closest -out benchmarks/results/closest-h200.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

type report struct {
	benchhead.Header
	Queries  int            `json:"queries"`
	Rounds   int            `json:"rounds"`
	Warmup   int            `json:"warmup"`
	TargetMs float64        `json:"target_ms"`
	Configs  []configResult `json:"configs"`
}

type configResult struct {
	Name      string           `json:"name"`
	Triangles int              `json:"triangles"`
	Width     int              `json:"bvh_width"`
	Nodes     int              `json:"bvh_nodes"`
	Height    int              `json:"bvh_height"`
	BuildMs   float64          `json:"build_wall_ms"`
	Points    string           `json:"points"`
	Ms        benchhead.Timing `json:"ms"`
	RowsPerS  float64          `json:"rows_per_s"`
	MeetsGoal bool             `json:"meets_target"`
	Misses    int              `json:"miss_rows"`
	// Unwritten counts rows still holding their poison after the checked
	// run; RefMismatches and BruteMismatches count rows differing in any
	// bit (−0 and +0 differ) from the CPU reference and the device brute
	// force.
	Unwritten       int      `json:"unwritten_rows"`
	RefChecked      int      `json:"rows_checked_vs_cpu_reference"`
	RefMismatches   int      `json:"mismatched_rows_vs_cpu_reference"`
	BruteChecked    int      `json:"rows_checked_vs_device_brute_force"`
	BruteMismatches int      `json:"mismatched_rows_vs_device_brute_force"`
	BruteMs         float64  `json:"brute_force_ms"`
	Compared        []string `json:"compared_fields"`
}

type options struct {
	ordinal, rounds, warmup, check, queries, bruteRows int
	only, out                                          string
	target                                             float64
}

func main() {
	var o options
	flag.IntVar(&o.ordinal, "device", 0, "device ordinal")
	flag.IntVar(&o.rounds, "rounds", 7, "timed rounds")
	flag.IntVar(&o.warmup, "warmup", 2, "warm-up rounds")
	flag.IntVar(&o.check, "check", 65536, "random rows checked against the CPU reference")
	flag.IntVar(&o.queries, "queries", 1<<22, "query points")
	flag.IntVar(&o.bruteRows, "brute-rows", 4096, "leading rows checked against the device brute force")
	flag.StringVar(&o.only, "config", "compute", "compute, light or all")
	flag.StringVar(&o.out, "out", "", "JSON output path")
	flag.Float64Var(&o.target, "target", 15, "target median ms on compute")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "closest:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	d, err := launch.Open(o.ordinal)
	if err != nil {
		return err
	}
	defer d.Close()
	h, err := benchhead.New(o.ordinal)
	if err != nil {
		return err
	}
	rep := report{Header: h, Queries: o.queries, Rounds: o.rounds, Warmup: o.warmup, TargetMs: o.target}
	fmt.Printf("# rayd-go closest-point benchmark on %s (cuda:%d, %d SMs, driver %d), build %s\n", h.Device.Name, o.ordinal,
		h.Device.SMs, h.Driver, h.Build)
	fmt.Printf("# %d points uniform in the mesh's box, %d warm-up + %d timed rounds; median (min) ms via CUDA events\n",
		o.queries, o.warmup, o.rounds)
	failed := false
	for _, cfg := range []workload.Config{workload.Light, workload.Compute} {
		if o.only != "all" && o.only != cfg.Name {
			continue
		}
		res, err := benchConfig(d, cfg, o)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Name, err)
		}
		rep.Configs = append(rep.Configs, *res)
		fmt.Printf("\n## %s: %d triangles, BVH width %d, %d nodes, height %d, build %.1f ms (wall)\n", res.Name,
			res.Triangles, res.Width, res.Nodes, res.Height, res.BuildMs)
		fmt.Printf("median %.3f ms, min %.3f ms, %.1f Mrows/s, misses %d, target %.1f ms met: %v\n", res.Ms.Median, res.Ms.Min,
			res.RowsPerS/1e6, res.Misses, o.target, res.MeetsGoal)
		fmt.Printf("vs CPU reference %d/%d mismatched, vs device brute force %d/%d mismatched (%.1f ms), unwritten %d\n",
			res.RefMismatches, res.RefChecked, res.BruteMismatches, res.BruteChecked, res.BruteMs, res.Unwritten)
		failed = failed || res.Unwritten > 0 || res.RefMismatches > 0 || res.BruteMismatches > 0
	}
	if o.out != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if failed {
		return fmt.Errorf("correctness check failed")
	}
	return nil
}

// boxPoints is n points uniform in the box of the vertices.
func boxPoints(t *geom.Tables, n int, seed uint64) []float32 {
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i, v := range t.Vertices {
		lo[i%3], hi[i%3] = min(lo[i%3], float64(v)), max(hi[i%3], float64(v))
	}
	r := rand.New(rand.NewPCG(seed, 0xc105e))
	p := make([]float32, 3*n)
	for i := range p {
		k := i % 3
		p[i] = float32(lo[k] + r.Float64()*(hi[k]-lo[k]))
	}
	return p
}

func benchConfig(d *launch.Device, cfg workload.Config, o options) (*configResult, error) {
	mesh, _, _ := cfg.Build()
	tb, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		return nil, err
	}
	s, err := d.NewStream()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	t0 := time.Now()
	bvh, err := accel.Build(s, tb)
	if err != nil {
		return nil, err
	}
	defer bvh.Close()
	if err := s.Synchronize(); err != nil {
		return nil, err
	}
	res := &configResult{Name: cfg.Name, Triangles: tb.NumFaces(), Width: bvh.Width(), Nodes: bvh.NumNodes(),
		Height: bvh.Height(), BuildMs: float64(time.Since(t0).Microseconds()) / 1e3,
		Points:   "uniform in the mesh's bounding box, unbounded (maxDist 0)",
		Compared: []string{"distance", "point", "bary", "shape_id", "local_face_id", "global_face_id"}}
	f, err := newFixture(d, s, bvh, boxPoints(tb, o.queries, 0x5eed+uint64(len(cfg.Name))))
	if err != nil {
		return nil, err
	}
	defer f.close()
	var times []float64
	for r := range o.warmup + o.rounds {
		ms, err := f.timed(func() error { return bvh.ClosestPoint(s, f.q, f.out[0]) })
		if err != nil {
			return nil, err
		}
		if r >= o.warmup {
			times = append(times, ms)
		}
	}
	res.Ms = benchhead.Summarize(times)
	res.RowsPerS = float64(o.queries) / (res.Ms.Median / 1e3)
	res.MeetsGoal = cfg.Name != workload.Compute.Name || res.Ms.Median <= o.target
	if err := f.check(tb, res, o); err != nil {
		return nil, err
	}
	return res, nil
}
