package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/par"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/ref"
)

// The -walks mode needs no GPU. It answers why crossings costs a multiple
// of visible on the same segments: both walk the same BVH with the same
// box test, but visible stops at its first hit and crossings walks every
// node the segment's interval enters. On a host build of the scene (the
// device's build bit for bit) it walks the first N segments of each batch
// twice: with accel.Layout.AnyHit (the host mirror of the occlusion
// traversal that visible runs) and with a full walk (every node whose child
// box the interval [MultipathTMin, tmax] meets, tested in float64, every
// triangle of every leaf reached tested with geom.Watertight), and reports
// the nodes, leaves and triangle tests per row of each and their ratios.
// The full walk's hit count must equal ref.Scene.Crossings' count on every
// row, or the run fails: a walk that lost a hit would measure nothing.

// walkCounts is the work of one walk per row.
type walkCounts struct {
	Nodes  float64 `json:"nodes"`
	Leaves float64 `json:"leaves"`
	Tris   float64 `json:"triangle_tests"`
}

// walkResult is one layout and segment batch.
type walkResult struct {
	Width    int        `json:"width"`
	Segments string     `json:"segments"`
	Rows     int        `json:"rows"`
	Blocked  float64    `json:"blocked_share"`
	MeanHits float64    `json:"mean_hits"`
	AnyHit   walkCounts `json:"any_hit"`
	Full     walkCounts `json:"full"`
	// NodeRatio and TriRatio are the full walk's nodes and triangle tests
	// over the any-hit walk's.
	NodeRatio float64 `json:"node_ratio"`
	TriRatio  float64 `json:"triangle_ratio"`
}

type walksReport struct {
	Scene     string       `json:"scene"`
	Triangles int          `json:"triangles"`
	Results   []walkResult `json:"results"`
}

// runWalks is the -walks mode: walks over the compute scene, printed and
// written to out (JSON) when out is not empty.
func runWalks(rows int, out string) error {
	cfg := workload.Compute
	fmt.Printf("# rayd-go crossings walks, host build (no GPU): %s scene, %d triangles, first %d segments of each batch\n",
		cfg.Name, cfg.Triangles(), rows)
	fmt.Printf("%-6s %-32s %9s %9s %9s %9s %6s %8s %7s %7s\n", "layout", "segments", "any nodes", "any tris",
		"all nodes", "all tris", "hits", "blocked", "nodes×", "tris×")
	rep, err := walks(cfg, rows, func(r walkResult) {
		fmt.Printf("w%-5d %-32s %9.1f %9.1f %9.1f %9.1f %6.2f %8.3f %7.2f %7.2f\n", r.Width, r.Segments, r.AnyHit.Nodes,
			r.AnyHit.Tris, r.Full.Nodes, r.Full.Tris, r.MeanHits, r.Blocked, r.NodeRatio, r.TriRatio)
	})
	if err != nil || out == "" {
		return err
	}
	buf, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(buf, '\n'), 0o644)
}

// walks walks the first rows chords and geometry segments of cfg's rays on
// host builds of both node layouts, calling each with every result.
func walks(cfg workload.Config, rows int, each func(walkResult)) (*walksReport, error) {
	mesh, o, d := cfg.Build()
	t, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		return nil, err
	}
	rows = min(rows, len(o)/3)
	cs, ce := chords(o[:3*rows], d[:3*rows])
	gs, ge := o[:3*rows], make([]float32, 3*rows)
	for i := range ge {
		ge[i] = o[i] + d[i]
	}
	rs, err := ref.NewScene(t)
	if err != nil {
		return nil, err
	}
	rep := &walksReport{Scene: cfg.Name, Triangles: t.NumFaces()}
	for _, w := range []int{2, 4} {
		l, err := accel.BuildHost(t, accel.Options{Width: w})
		if err != nil {
			return nil, err
		}
		for _, b := range []struct {
			name       string
			start, end []float32
		}{{"chords across the box", cs, ce}, {"o -> o + d (benchmarks/geometry)", gs, ge}} {
			want, err := rs.Crossings(b.start, b.end, nil, 1)
			if err != nil {
				return nil, err
			}
			r, err := walkBatch(l, b.start, b.end, want.Count)
			if err != nil {
				return nil, fmt.Errorf("w%d %s: %w", w, b.name, err)
			}
			r.Width, r.Segments = w, b.name
			rep.Results = append(rep.Results, *r)
			each(*r)
		}
	}
	return rep, nil
}

// walkBatch walks every segment of start→end both ways on every core; want
// is the reference hit count per row.
func walkBatch(l *accel.Layout, start, end []float32, want []int32) (*walkResult, error) {
	n := len(start) / 3
	var (
		mu              sync.Mutex
		anyHit, full    accel.TraceStats
		blocked, hits   int
		bad             int
		badRow, badHits = n, 0
	)
	_ = par.Rows(context.Background(), n, walkBlock, func(lo, hi int) {
		var a, f accel.TraceStats
		nb, nh, nbad, row, rowHits := 0, 0, 0, n, 0
		for i := lo; i < hi; i++ {
			o, d, tmax, ok := geom.SegmentRay([3]float32(start[3*i:3*i+3]), [3]float32(end[3*i:3*i+3]))
			h := 0
			if ok {
				if l.AnyHit(o, d, geom.MultipathTMin, tmax, &a) {
					nb++
				}
				h = fullWalk(l, o, d, geom.MultipathTMin, tmax, &f)
			}
			nh += h
			if int32(h) != want[i] {
				if nbad == 0 {
					row, rowHits = i, h
				}
				nbad++
			}
		}
		mu.Lock()
		defer mu.Unlock()
		anyHit.Nodes, anyHit.Leaves, anyHit.Tris = anyHit.Nodes+a.Nodes, anyHit.Leaves+a.Leaves, anyHit.Tris+a.Tris
		full.Nodes, full.Leaves, full.Tris = full.Nodes+f.Nodes, full.Leaves+f.Leaves, full.Tris+f.Tris
		blocked, hits, bad = blocked+nb, hits+nh, bad+nbad
		if row < badRow {
			badRow, badHits = row, rowHits
		}
	})
	if bad > 0 {
		return nil, fmt.Errorf("the full walk's hit count differs from the reference on %d rows (row %d: %d hits, reference %d)",
			bad, badRow, badHits, want[badRow])
	}
	f := float64(n)
	r := &walkResult{Rows: n, Blocked: float64(blocked) / f, MeanHits: float64(hits) / f,
		AnyHit: walkCounts{float64(anyHit.Nodes) / f, float64(anyHit.Leaves) / f, float64(anyHit.Tris) / f},
		Full:   walkCounts{float64(full.Nodes) / f, float64(full.Leaves) / f, float64(full.Tris) / f}}
	r.NodeRatio = r.Full.Nodes / r.AnyHit.Nodes
	r.TriRatio = r.Full.Tris / r.AnyHit.Tris
	return r, nil
}

// walkBlock is the row block of walkBatch.
const walkBlock = 256

// fullWalk walks every node of l whose child box o + t·d, t ∈ [tmin, tmax],
// enters (child-pair or quad layout) and returns the triangle hits.
// st counts nodes opened, leaves entered and triangle tests.
func fullWalk(l *accel.Layout, o, d [3]float32, tmin, tmax float32, st *accel.TraceStats) int {
	hits := 0
	stack := []int32{0}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r < 0 {
			first, count := accel.DecodeLeaf(r)
			st.Leaves++
			for k := first; k < first+count; k++ {
				st.Tris++
				v := l.Triangle(k).V
				if _, _, _, ok := geom.Watertight(o, d, v[0], v[1], v[2], tmin, tmax); ok {
					hits++
				}
			}
			continue
		}
		st.Nodes++
		if l.Width == 4 {
			q := l.QuadNode(int(r))
			for c := range q.Slots {
				if enters(o, d, tmin, tmax, q.Lo[c], q.Hi[c]) {
					stack = append(stack, q.Ref[c])
				}
			}
			continue
		}
		nd := l.Node(int(r))
		for c := range 2 {
			if c == 1 && nd.Ref[1] == nd.Ref[0] {
				break
			}
			lo := [3]float64{float64(nd.Lo[c][0]), float64(nd.Lo[c][1]), float64(nd.Lo[c][2])}
			hi := [3]float64{float64(nd.Hi[c][0]), float64(nd.Hi[c][1]), float64(nd.Hi[c][2])}
			if enters(o, d, tmin, tmax, lo, hi) {
				stack = append(stack, nd.Ref[c])
			}
		}
	}
	return hits
}

// enters is the float64 slab test of o + t·d, t ∈ [tmin, tmax], against the
// box [lo, hi], the interval padded by a relative 1e-6 so that no box the
// float32 walk would enter is missed.
func enters(o, d [3]float32, tmin, tmax float32, lo, hi [3]float64) bool {
	tn, tf := float64(tmin)*(1-1e-6), float64(tmax)*(1+1e-6)
	for k := range 3 {
		ok, dk := float64(o[k]), float64(d[k])
		if dk == 0 {
			if ok < lo[k] || ok > hi[k] {
				return false
			}
			continue
		}
		a, b := (lo[k]-ok)/dk, (hi[k]-ok)/dk
		tn, tf = math.Max(tn, math.Min(a, b)), math.Min(tf, math.Max(a, b))
	}
	return tn <= tf
}
