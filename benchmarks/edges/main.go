// Command edges benchmarks the GPU nearest-edge queries (spec §5) on one
// device over the edges of the seed's two meshes (spec/multidevice.md
// §10.1): "light", the 192-vertex grid (109,825 edges), and "compute", the
// 2.1M-triangle cloud (6,291,456 edges).
//
// For each mesh it times the edge BVH build (wall clock of accel.BuildEdges:
// the table upload, the LBVH build and its status read) and, with CUDA
// events on device-resident batches, three queries of 4,194,304 rows each:
// nearest edge to a point, to a segment (finite tmax) and to a half ray.
// Variants are interleaved inside each round after warm-up rounds; the table
// reports the median and minimum. -kernels times several ray kernels in the
// same run (accel.EdgeRayKernel: pruned, the float32-pruned walk with lanes
// that refill one by one; ops, the same walk one operation per lane and
// iteration, NearestRay's kernel on large edge BVHs; phased, batched refills
// and node and leaf phases; spec, phased with speculative node phases,
// NearestRay's kernel on small ones; phased_top, phased with the top of the
// stack in registers; rows, one thread per row; exact, the float64-bounded
// walk), each checked like the default one.
//
// -orders also times each ray batch with its rows sorted on the host by a
// key of the origin and direction, or of the query's part inside the
// origins' box (mid, mid5, ends; order.go), and with xyz each point batch
// by the point's Morton code, a probe of what coherent warps would gain; the
// queries themselves never sort (the measurements are in
// benchmarks/results/experiments/edge-sort/ and edge-point-sort/).
//
// -mirror N needs no GPU: it walks the first N rows of each ray batch with
// the host mirrors of the kernels (accel.Layout.NearestEdgeRay over
// accel.BuildEdgesHost, the device build bit for bit) and prints the work
// per row (nodes, box tests, leaves, records, float64 closest pairs), every
// row checked against the CPU reference. The pruned walk's counts are those
// of every float32-pruned kernel but spec, whose steps depend on the other
// rows of its warp.
//
// Correctness: the BVH's output and the brute force's are poisoned with
// different values (NaN payloads, impossible ids), so that a row neither
// kernel wrote cannot compare equal; rows left with their poison are
// counted and fail the run. Each query's rows are compared
// bit for bit with the device brute-force kernel (every row on light, the
// first -brute-rows rows, 16,384 by default, on compute, where a full scan
// of 4M × 6.3M pairs takes about 100 s for points and 7 to 8 minutes for
// each ray query on an H200, at the light scan's measured pair rates), and a
// random sample of -check rows with the CPU
// reference (package edge). Any mismatch fails the run.
//
//	edges -out benchmarks/results/edges-h200.json
//	edges -kernels auto,pruned,rows,exact,phased,phased_top,ops,spec -out edges-kernels.json
//	edges -config light -orders octant,m5 -brute-all-light=false
//	edges -mirror 20000
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/launch"
)

type report struct {
	benchhead.Header
	Queries int            `json:"queries"`
	Rounds  int            `json:"rounds"`
	Warmup  int            `json:"warmup"`
	Configs []configResult `json:"configs"`
}

type options struct {
	ordinal, rounds, warmup, check, queries, bruteRows, leaf, bruteDevices, mirror int
	bruteAllLight                                                                  bool
	only, out, kinds, kernels, orders                                              string
}

func main() {
	var o options
	flag.IntVar(&o.ordinal, "device", 0, "device ordinal")
	flag.IntVar(&o.rounds, "rounds", 7, "timed rounds")
	flag.IntVar(&o.warmup, "warmup", 2, "warm-up rounds")
	flag.IntVar(&o.check, "check", 65536, "rows per query checked against the CPU reference")
	flag.IntVar(&o.queries, "queries", 1<<22, "rows per query batch")
	flag.IntVar(&o.bruteRows, "brute-rows", 16384, "rows checked against the device brute force on compute (light: all)")
	flag.BoolVar(&o.bruteAllLight, "brute-all-light", true, "check every light row against the device brute force (false: the first -brute-rows, as on compute)")
	flag.IntVar(&o.bruteDevices, "brute-devices", 1, "devices sharing the brute-force check (-device and the next ones)")
	flag.IntVar(&o.leaf, "leaf", 0, "largest BVH leaf, 1..8 (0: the edge BVH default)")
	flag.StringVar(&o.only, "config", "", "light or compute (default both)")
	flag.StringVar(&o.kinds, "kinds", "point,segment,half_ray", "queries to run (comma-separated)")
	flag.StringVar(&o.kernels, "kernels", "auto", "ray kernels to time, interleaved (comma-separated: "+kernelNames()+"); auto is what NearestRay runs, rows by another kernel are named segment_pruned, segment_exact, ...")
	flag.StringVar(&o.orders, "orders", "", "also time each ray batch with its rows sorted on the host by these keys (comma-separated: octant, m5, dir, org, mid, mid5, ends, xyz; xyz sorts point batches too), named segment@m5, point@xyz, ...")
	flag.StringVar(&o.out, "out", "", "JSON output path")
	flag.IntVar(&o.mirror, "mirror", 0, "no GPU: walk this many rows of each ray batch with the host mirrors of both ray kernels and report the work per row")
	flag.Parse()
	run := run
	if o.mirror > 0 {
		run = runMirror
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "edges:", err)
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
	rep := report{Header: h, Queries: o.queries, Rounds: o.rounds, Warmup: o.warmup}
	fmt.Printf("# rayd-go edge query benchmark on %s (cuda:%d, %d SMs, driver %d), build %s\n", h.Device.Name, o.ordinal, h.Device.SMs, h.Driver, h.Build)
	fmt.Printf("# %d rows per query, %d warm-up + %d timed rounds, variants interleaved; median (min) ms via CUDA events\n",
		o.queries, o.warmup, o.rounds)
	failed := false
	for _, cfg := range configs(o.only) {
		res, err := benchConfig(d, cfg, o)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Name, err)
		}
		rep.Configs = append(rep.Configs, *res)
		printConfig(res)
		for _, q := range res.Queries {
			failed = failed || q.BruteMismatches > 0 || q.RefMismatches > 0 || q.UnwrittenBVH > 0 || q.UnwrittenBrute > 0
		}
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
		return fmt.Errorf("correctness check failed (see the table)")
	}
	return nil
}

func printConfig(c *configResult) {
	fmt.Printf("\n## %s: %d edges, BVH %d nodes, height %d, build %.2f ms (min %.2f, wall, %d builds)\n",
		c.Name, c.Edges, c.Nodes, c.Height, c.BuildWallMs.Median, c.BuildWallMs.Min, len(c.BuildWallMs.Rounds))
	fmt.Printf("%-14s %10s %10s %12s %10s %14s %14s %10s\n", "query", "median ms", "min ms", "Mrows/s", "brute ms", "vs brute", "vs CPU ref", "unwritten")
	for _, q := range c.Queries {
		fmt.Printf("%-14s %10.3f %10.3f %12.1f %10.1f %8d/%-5d %8d/%-5d %4d/%-5d\n", q.Name, q.Ms.Median, q.Ms.Min,
			q.RowsPerSec/1e6, q.BruteMs, q.BruteChecked, q.BruteMismatches, q.RefChecked, q.RefMismatches, q.UnwrittenBVH, q.UnwrittenBrute)
	}
}
