package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/workload"
)

// The -mirror mode needs no GPU: it builds each mesh's edge BVH on the host
// (accel.BuildHost, bit for bit the device build), walks the first -mirror
// rows of the segment and half-ray batches with the host mirrors of both
// ray kernels (accel.Layout.NearestEdgeRay) and reports the work per row:
// nodes opened, child box tests, leaves, records read, float64 closest
// pairs, best changes, the deepest stack. Every row of both kernels must
// equal the CPU reference (package edge) bit for bit.

// mirrorKernel is the work of one kernel on one batch.
type mirrorKernel struct {
	Kernel string `json:"kernel"`
	// PerRow is each count of accel.EdgeRayStats divided by the rows.
	PerRow     map[string]float64 `json:"per_row"`
	MaxStack   int                `json:"max_stack"`
	Deferred   int                `json:"rows_deferred_to_float64_walk"`
	Scans      int                `json:"rows_scanning_every_record"`
	Mismatches int                `json:"rows_unequal_to_cpu_reference"`
}

type mirrorQuery struct {
	Name    string         `json:"name"`
	Rows    int            `json:"rows"`
	Kernels []mirrorKernel `json:"kernels"`
}

type mirrorConfig struct {
	Name    string        `json:"name"`
	Edges   int           `json:"edges"`
	Nodes   int           `json:"bvh_nodes"`
	Height  int           `json:"bvh_height"`
	Queries []mirrorQuery `json:"queries"`
}

// runMirror is the -mirror mode.
func runMirror(o options) error {
	fmt.Printf("# rayd-go edge ray kernels, host mirror (no GPU): work per row over the first %d rows of each batch\n", o.mirror)
	var out []mirrorConfig
	failed := false
	for _, cfg := range configs(o.only) {
		mc, err := mirrorConfigRun(cfg, o)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Name, err)
		}
		out = append(out, *mc)
		for _, q := range mc.Queries {
			for _, k := range q.Kernels {
				failed = failed || k.Mismatches > 0
			}
		}
	}
	if o.out != "" {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if failed {
		return fmt.Errorf("a mirrored kernel differs from the CPU reference (see the table)")
	}
	return nil
}

func mirrorConfigRun(cfg workload.Config, o options) (*mirrorConfig, error) {
	tb, es, err := edgeScene(cfg)
	if err != nil {
		return nil, err
	}
	opt := accel.EdgeOptions
	opt.MaxLeafSize = o.leaf
	lay, err := accel.BuildEdgesHost(tb.Vertices, accel.EdgeTablesOf(es.Edges), opt)
	if err != nil {
		return nil, err
	}
	mc := &mirrorConfig{Name: cfg.Name, Edges: es.Edges.Len(), Nodes: lay.NumNodes, Height: lay.Height}
	fmt.Printf("\n## %s: %d edges, BVH %d nodes, height %d\n", cfg.Name, mc.Edges, mc.Nodes, mc.Height)
	fmt.Printf("%-9s %-7s %9s %9s %8s %8s %8s %8s %6s %7s\n", "query", "kernel", "nodes", "boxes", "leaves",
		"records", "exact", "improved", "stack", "vs ref")
	for _, b := range queries(tb, o.queries, 0x5eed+uint64(len(cfg.Name))) {
		if b.d == nil {
			continue
		}
		rows := min(o.mirror, o.queries)
		q := mirrorQuery{Name: b.name, Rows: rows}
		want, err := es.NearestRay(b.p[:3*rows], b.d[:3*rows], sliceOrNil(b.tmax, rows), nil)
		if err != nil {
			return nil, err
		}
		for _, k := range []accel.EdgeRayKernel{accel.EdgeRayExact, accel.EdgeRayPruned} {
			st, hits := mirrorWalk(lay, b, rows, k)
			mk := mirrorKernel{Kernel: k.String(), MaxStack: st.MaxStack, Deferred: st.Deferred, Scans: st.Scans,
				PerRow: map[string]float64{}}
			for name, v := range map[string]int{"nodes": st.Nodes, "boxes": st.Boxes, "leaves": st.Leaves,
				"records": st.Records, "exact": st.Exact, "improved": st.Improved} {
				mk.PerRow[name] = float64(v) / float64(rows)
			}
			for i := range rows {
				if !sameHit(es, b, i, hits[i], want) {
					if mk.Mismatches == 0 {
						fmt.Printf("  %s %s row %d: mirror gid %d, reference gid %d\n", b.name, k, i, hits[i].Global, want.GlobalEdgeID[i])
					}
					mk.Mismatches++
				}
			}
			p := mk.PerRow
			fmt.Printf("%-9s %-7s %9.1f %9.1f %8.1f %8.1f %8.2f %8.2f %6d %7s\n", b.name, k, p["nodes"], p["boxes"],
				p["leaves"], p["records"], p["exact"], p["improved"], st.MaxStack, fmt.Sprintf("%d/%d", rows-mk.Mismatches, rows))
			q.Kernels = append(q.Kernels, mk)
		}
		mc.Queries = append(mc.Queries, q)
	}
	return mc, nil
}

func sliceOrNil(v []float32, n int) []float32 {
	if v == nil {
		return nil
	}
	return v[:n]
}

// mirrorWalk walks rows [0, rows) of b with kernel k on the host, on every
// core.
func mirrorWalk(lay *accel.Layout, b *batch, rows int, k accel.EdgeRayKernel) (accel.EdgeRayStats, []accel.EdgeRayHit) {
	hits := make([]accel.EdgeRayHit, rows)
	workers := runtime.GOMAXPROCS(0)
	stats := make([]accel.EdgeRayStats, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < rows; i += workers {
				var o, d [3]float32
				copy(o[:], b.p[3*i:3*i+3])
				copy(d[:], b.d[3*i:3*i+3])
				T := float32(math.Inf(1))
				if b.tmax != nil {
					T = b.tmax[i]
				}
				hits[i] = lay.NearestEdgeRay(k, o, d, T, nil, &stats[w])
			}
		}()
	}
	wg.Wait()
	var st accel.EdgeRayStats
	for _, s := range stats {
		st.Add(s)
	}
	return st, hits
}

// sameHit compares a mirrored hit with row i of the CPU reference: the
// global id and the float32 results the kernels would write.
func sameHit(es *edge.Scene, b *batch, i int, h accel.EdgeRayHit, want *edge.RayResult) bool {
	if h.Global != want.GlobalEdgeID[i] {
		return false
	}
	if h.Global < 0 {
		return true
	}
	f := func(x float64, y float32) bool {
		return math.Float32bits(float32(x)) == math.Float32bits(y) || (x == 0 && y == 0)
	}
	return f(math.Sqrt(h.D2), want.Distance[i]) && f(h.T, want.RayT[i]) && f(h.S, want.EdgeT[i]) &&
		es.Edges.ShapeID[h.Global] == want.ShapeID[i]
}
