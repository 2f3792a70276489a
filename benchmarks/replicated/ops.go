package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
)

// batch is one random input set: rays through the scene's box with per-row
// tmax and active flags, segment ends, query points, chain lengths and
// cotangents.
type batch struct {
	n                 int
	o, d, tmax, end   []float32
	active            []bool
	points            []float32
	chainLen          []int32
	gT                []float32
	gDist, gEdgeT     []float64
	gRayT             []float64
	sampleTMin, sTMax []float32
}

func newBatch(n int, seed uint64) *batch {
	r := rand.New(rand.NewPCG(seed, 0x51ed))
	b := &batch{n: n}
	u := func(lo, hi float64) float32 { return float32(lo + (hi-lo)*r.Float64()) }
	for range n {
		b.o = append(b.o, u(-1.1, 1.1), u(-1.1, 1.1), u(-0.6, -0.2))
		b.d = append(b.d, u(-0.5, 0.5), u(-0.5, 0.5), u(0.2, 1))
		b.end = append(b.end, u(-1.1, 1.1), u(-1.1, 1.1), u(-0.3, 0.6))
		b.points = append(b.points, u(-1.2, 1.2), u(-1.2, 1.2), u(-0.5, 0.5))
		b.tmax = append(b.tmax, u(0.2, 4))
		b.active = append(b.active, r.IntN(8) != 0)
		b.gT = append(b.gT, float32(r.NormFloat64()))
		b.gDist = append(b.gDist, r.NormFloat64())
		b.gEdgeT = append(b.gEdgeT, r.NormFloat64())
		b.gRayT = append(b.gRayT, r.NormFloat64())
		b.sampleTMin = append(b.sampleTMin, u(-0.2, 0.2))
		b.sTMax = append(b.sTMax, u(0.5, 1.5))
	}
	b.chainLen = make([]int32, n/3)
	for i := range b.chainLen {
		b.chainLen[i] = int32(r.IntN(4))
	}
	return b
}

func (b *batch) rays() rayd.Rays {
	return rayd.Rays{Origins: b.o, Directions: b.d, TMax: b.tmax, Active: b.active}
}

// op runs one operation on a scene and returns its record(s): the first is
// compared bit for bit; the second, when present, is a vertex gradient
// compared by relative L2 within tol.
type op struct {
	name string
	tol  float64
	run  func(ctx context.Context, s *rayd.Scene, b *batch) (rec any, vertices []float64, err error)
}

func ops() []op {
	return []op{
		{name: "intersect_full", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			h, err := s.Intersect(ctx, b.rays(), rayd.FlagsAll)
			return h, nil, err
		}},
		{name: "intersect_reduced", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			h, err := s.Intersect(ctx, b.rays(), rayd.FlagsNone)
			return h, nil, err
		}},
		{name: "trace_reflections:4", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			r, err := s.TraceReflections(ctx, b.rays(), 4)
			return r, nil, err
		}},
		{name: "visible", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			v, err := s.Visible(ctx, b.o, b.end, b.active)
			return v, nil, err
		}},
		{name: "visible_pair", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			a, c, err := s.VisiblePair(ctx, b.o, b.end, b.points, nil, b.active)
			return &rayd.PairVisibility{A: a, B: c}, nil, err
		}},
		{name: "visible_edge", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			v, err := s.VisibleEdge(ctx, rayd.EdgeSamples{Source: b.o, Position: b.points, Direction: b.d,
				TMin: b.sampleTMin, TMax: b.sTMax, Active: b.active})
			return v, nil, err
		}},
		{name: "visible_chain", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			m := len(b.chainLen)
			v, err := s.VisibleChain(ctx, b.points[:9*m], 3, b.chainLen, nil, nil)
			return v, nil, err
		}},
		{name: "crossings:8", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			c, err := s.Crossings(ctx, b.o, b.end, 8, b.active)
			return c, nil, err
		}},
		{name: "nearest_edge", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			r, err := s.NearestEdge(ctx, b.points)
			return r, nil, err
		}},
		{name: "nearest_edge_ray (segments)", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			r, err := s.NearestEdgeRay(ctx, b.rays())
			return r, nil, err
		}},
		{name: "nearest_edge_ray (half rays)", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			r, err := s.NearestEdgeRay(ctx, rayd.Rays{Origins: b.o, Directions: b.d, Active: b.active})
			return r, nil, err
		}},
		{name: "nearest_edges:5", run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			r, err := s.NearestEdges(ctx, b.points, 5, b.active)
			return r, nil, err
		}},
		{name: "intersect_vjp", tol: 1e-5, run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			rays := rayd.Rays{Origins: b.o, Directions: b.d, Active: b.active}
			h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
			if err != nil {
				return nil, nil, err
			}
			g, err := s.IntersectVJP(ctx, rays, h, rayd.IntersectCotangents{T: b.gT})
			if err != nil {
				return nil, nil, err
			}
			return &struct{ Origins, Directions []float32 }{g.Origins, g.Directions}, widen(g.Vertices), nil
		}},
		{name: "nearest_edge_vjp", tol: 1e-12, run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			r, err := s.NearestEdge(ctx, b.points)
			if err != nil {
				return nil, nil, err
			}
			dp, dv, err := s.NearestEdgeVJP(ctx, b.points, r, edge.PointCotangent{Distance: b.gDist, EdgeT: b.gEdgeT})
			return dp, dv, err
		}},
		{name: "nearest_edge_ray_vjp", tol: 1e-12, run: func(ctx context.Context, s *rayd.Scene, b *batch) (any, []float64, error) {
			rays := rayd.Rays{Origins: b.o, Directions: b.d, TMax: b.tmax}
			r, err := s.NearestEdgeRay(ctx, rays)
			if err != nil {
				return nil, nil, err
			}
			do, dd, dv, err := s.NearestEdgeRayVJP(ctx, rays, r, edge.RayCotangent{Distance: b.gDist, RayT: b.gRayT})
			return &struct{ Origins, Directions []float64 }{do, dd}, dv, err
		}},
	}
}

// sceneMeshes is a grid of cells² cells with its edges (191: the light
// grid) and a closed box above it: hits, reflections, blockers and edges
// everywhere.
func sceneMeshes(cells int) []rayd.Mesh {
	g := workload.GridMesh(cells, 2)
	g.Dynamic = true
	return []rayd.Mesh{g, testscene.Box([3]float32{0, 0, 0.25}, [3]float32{0.3, 0.2, 0.1})}
}

// compareAll runs every operation on the single-device, the replicated and
// (on a smaller batch) the CPU scene, without and with an edge mask.
func compareAll(ctx context.Context, rep *report, meshes []rayd.Mesh, rows, cpuRows int, build factory, device bool) error {
	single, repl, err := build(ctx, meshes, rayd.MultiDeviceOptions{})
	if err != nil {
		return err
	}
	defer single.Close()
	defer repl.Close()
	cpu, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		return err
	}
	defer cpu.Close()
	bigSeed := uint64(time.Now().UnixNano())
	big, small := newBatch(rows, bigSeed), newBatch(cpuRows, bigSeed+1)
	for _, masked := range []bool{false, true} {
		config := fmt.Sprintf("grid %d + box", int(math.Round(math.Sqrt(float64(len(meshes[0].Faces)/6)))))
		var maskSeed uint64
		if masked {
			mask := make([]bool, single.NumEdges())
			maskSeed = uint64(time.Now().UnixNano())
			r := rand.New(rand.NewPCG(maskSeed, 3))
			for i := range mask {
				mask[i] = r.IntN(4) != 0
			}
			for _, s := range []*rayd.Scene{single, repl, cpu} {
				if err := s.SetEdgeMask(ctx, mask); err != nil {
					return err
				}
			}
			config += ", edge mask"
		}
		for _, o := range ops() {
			if masked && !isEdgeOp(o.name) {
				continue
			}
			row, err := compareOp(ctx, o, single, repl, cpu, big, small)
			if err != nil {
				return fmt.Errorf("%s: %w", o.name, err)
			}
			row.Config = config
			row.BatchSeed, row.CPUBatchSeed, row.MaskSeed = bigSeed, bigSeed+1, maskSeed
			rep.Operations = append(rep.Operations, row)
			if !row.BitwiseEqual || row.CPUMismatches > 0 || (row.VertexRelL2 != nil && *row.VertexRelL2 > o.tol) {
				rep.Failures = append(rep.Failures, fmt.Sprintf("%s (%s)", o.name, config))
			}
			fmt.Printf("%-30s %-24s %8d rows  %-10s mismatches %d  cpu %d/%d  %.1f / %.1f ms\n", o.name, config, row.Rows,
				row.Dispatch, row.Mismatches, row.CPUMismatches, row.CPURows, row.SingleMs, row.ReplicatedMs)
			if m := row.FirstCPUMismatch; m != nil {
				fmt.Printf("  first row unlike the CPU reference: %s[%d] cpu %s, device %s (cpu batch seed %d, mask seed %d)\n",
					m.Field, m.Index, m.Want, m.Got, row.CPUBatchSeed, row.MaskSeed)
			}
		}
	}
	if device {
		for _, f := range fastPaths(ctx, single, repl, big) {
			rep.Operations = append(rep.Operations, f)
			if !f.BitwiseEqual {
				rep.Failures = append(rep.Failures, f.Op)
			}
		}
	}
	off, err := offloadAll(ctx, meshes, rows, build)
	if err != nil {
		return err
	}
	for _, o := range off {
		if !o.Once {
			rep.Failures = append(rep.Failures, "offload "+o.Op)
		}
	}
	rep.Offload = off
	return nil
}

func isEdgeOp(name string) bool { return len(name) >= 7 && name[:7] == "nearest" }

func compareOp(ctx context.Context, o op, single, repl, cpu *rayd.Scene, big, small *batch) (opRow, error) {
	row := opRow{Op: o.name, Rows: big.n}
	t0 := time.Now()
	want, wv, err := o.run(ctx, single, big)
	if err != nil {
		return row, err
	}
	row.SingleMs = ms(time.Since(t0))
	t0 = time.Now()
	got, gv, err := o.run(ctx, repl, big)
	if err != nil {
		return row, err
	}
	row.ReplicatedMs = ms(time.Since(t0))
	if d := repl.LastDispatch(); d != nil {
		row.Dispatch = string(d.Mode)
	}
	if row.Fields, row.Mismatches, _, err = diff(want, got); err != nil {
		return row, err
	}
	row.BitwiseEqual = row.Mismatches == 0
	if wv != nil {
		l2 := benchhead.RelL2(wv, gv)
		row.VertexRelL2, row.VertexTol = &l2, o.tol
	}
	ref, _, err := o.run(ctx, cpu, small)
	if err != nil {
		return row, err
	}
	mine, _, err := o.run(ctx, repl, small)
	if err != nil {
		return row, err
	}
	row.CPURows = small.n
	if o.tol == 0 || o.name == "nearest_edge_vjp" || o.name == "nearest_edge_ray_vjp" {
		_, row.CPUMismatches, row.FirstCPUMismatch, err = diff(ref, mine)
	} else {
		// The intersect VJP's rows are float64 on the device and narrowed;
		// the reference narrows its float64 rows: both are compared on the
		// ray gradients only, by relative L2.
		rw, mw := ref.(*struct{ Origins, Directions []float32 }), mine.(*struct{ Origins, Directions []float32 })
		if benchhead.RelL2(widen(rw.Origins), widen(mw.Origins)) > 1e-5 || benchhead.RelL2(widen(rw.Directions), widen(mw.Directions)) > 1e-5 {
			row.CPUMismatches = 1
		}
	}
	return row, err
}
