// Package cpu is the engine of rayd-go's CPU backend: every operation runs
// the pure-Go references (ref for the triangle queries, edge for the
// nearest-edge queries, rf for the RF operations) in float64 or in the
// contract's float32 arithmetic, on every core. It is the oracle the GPU
// engines are tested against and the backend of a machine without a GPU.
// Large batches run in row blocks and honour cancellation between blocks.
// The device fast paths are refused with an error matching both
// engine.ErrUnsupported and engine.ErrBackendUnavailable.
//
// Place in the package graph: cpu → engine, ref, edge, rf, shard, geom.
package cpu

import (
	"context"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// Engine runs a scene on the CPU references.
type Engine struct {
	tables *geom.Tables
	s      *ref.Scene
}

var _ engine.Engine = (*Engine)(nil)

// New builds the reference scene (its BVH) over t. The engine reads t at
// every query: the façade updates it in place and calls Refit.
func New(ctx context.Context, t *geom.Tables) (*Engine, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := ref.NewScene(t)
	if err != nil {
		return nil, err
	}
	return &Engine{tables: t, s: s}, nil
}

// Describe returns "cpu".
func (e *Engine) Describe() string { return "cpu" }

// Reference returns the reference scene (for the simulated replicas of
// tests).
func (e *Engine) Reference() *ref.Scene { return e.s }

// Intersect runs ref.Scene.Intersect in row blocks.
func (e *Engine) Intersect(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	t := &shard.Intersect{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active, Flags: flags}
	return inBlocks(ctx, t, func(lo, hi int) (*geom.Hits, error) {
		c := t.Slice(lo, hi)
		return e.s.Intersect(c.O, c.D, c.TMax, c.Active, flags)
	})
}

// TraceReflections runs ref.Scene.TraceReflections in row blocks.
func (e *Engine) TraceReflections(ctx context.Context, r engine.Rays, bounces int) (*geom.Reflections, error) {
	t := &shard.TraceReflections{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active, Bounces: bounces}
	return inBlocks(ctx, t, func(lo, hi int) (*geom.Reflections, error) {
		c := t.Slice(lo, hi)
		return e.s.TraceReflections(c.O, c.D, c.TMax, c.Active, bounces)
	})
}

// Visible runs ref.Scene.Visible in row blocks.
func (e *Engine) Visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	t := &shard.Visible{Start: start, End: end, Active: active}
	return inBlocks(ctx, t, func(lo, hi int) ([]bool, error) {
		c := t.Slice(lo, hi)
		return e.s.Visible(c.Start, c.End, c.Active)
	})
}

// blockers is the reference's segment query, checking ctx per call.
func (e *Engine) blockers(ctx context.Context) geom.SegmentBlockers {
	return func(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return e.s.SegmentBlockers(start, end, active, ignore, k)
	}
}

// VisiblePair answers visible_pair on the reference, in row blocks.
func (e *Engine) VisiblePair(ctx context.Context, b *geom.SegmentBatch) (*geom.PairVisibility, error) {
	return segments(ctx, shard.PairTask(b), e.blockers(ctx))
}

// VisibleEdge answers visible_edge on the reference, in row blocks.
func (e *Engine) VisibleEdge(ctx context.Context, b *geom.SegmentBatch) ([]bool, error) {
	return segments(ctx, shard.EdgeVisibilityTask(b), e.blockers(ctx))
}

// VisibleChain answers visible_chain on the reference, in row blocks.
func (e *Engine) VisibleChain(ctx context.Context, b *geom.SegmentBatch) (*geom.ChainVisibility, error) {
	return segments(ctx, shard.ChainTask(b), e.blockers(ctx))
}

// NearestEdge runs the edge package's query (its Index on large batches).
func (e *Engine) NearestEdge(ctx context.Context, ed engine.Edges, points []float32, active []bool) (*edge.PointResult, error) {
	t := &shard.NearestEdge{Points: points, Active: active}
	return inBlocks(ctx, t, func(lo, hi int) (*edge.PointResult, error) {
		c := t.Slice(lo, hi)
		return ed.Scene.NearestPoint(c.Points, c.Active)
	})
}

// NearestEdgeRay runs the edge package's ray query.
func (e *Engine) NearestEdgeRay(ctx context.Context, ed engine.Edges, r engine.Rays) (*edge.RayResult, error) {
	t := &shard.NearestEdgeRay{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active}
	return inBlocks(ctx, t, func(lo, hi int) (*edge.RayResult, error) {
		c := t.Slice(lo, hi)
		return ed.Scene.NearestRay(c.O, c.D, c.TMax, c.Active)
	})
}

// NearestEdges runs the edge package's top-k query.
func (e *Engine) NearestEdges(ctx context.Context, ed engine.Edges, points []float32, k int, active []bool) (*edge.TopK, error) {
	t := &shard.NearestEdges{Points: points, K: k, Active: active}
	return inBlocks(ctx, t, func(lo, hi int) (*edge.TopK, error) {
		c := t.Slice(lo, hi)
		return ed.Scene.NearestK(c.Points, k, c.Active)
	})
}

// NearestEdgeVJP runs the edge package's point backward pass.
func (e *Engine) NearestEdgeVJP(ctx context.Context, ed engine.Edges, points []float32, gid []int32, g edge.PointCotangent) (*shard.EdgePointGrads, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &edge.PointResult{GlobalEdgeID: gid, Distance: make([]float32, len(gid))}
	dp, dv, err := ed.Scene.NearestPointVJP(points, res, g)
	if err != nil {
		return nil, err
	}
	return &shard.EdgePointGrads{Points: dp, Vertices: dv}, nil
}

// NearestEdgeRayVJP runs the edge package's ray backward pass.
func (e *Engine) NearestEdgeRayVJP(ctx context.Context, ed engine.Edges, r engine.Rays, gid []int32, g edge.RayCotangent) (*shard.EdgeRayGrads, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &edge.RayResult{GlobalEdgeID: gid, Distance: make([]float32, len(gid))}
	do, dd, dv, err := ed.Scene.NearestRayVJP(r.Origins, r.Directions, r.TMax, res, g)
	if err != nil {
		return nil, err
	}
	return &shard.EdgeRayGrads{Origins: do, Directions: dd, Vertices: dv}, nil
}

// IntersectVJP runs ref.IntersectVJP (float64) and narrows to float32.
func (e *Engine) IntersectVJP(ctx context.Context, r engine.Rays, prim []int32, uv []float32, g geom.IntersectCotangents) (*shard.IntersectGrads, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := ref.IntersectVJP(e.tables, r.Origins, r.Directions, r.Active, prim, uv, g)
	if err != nil {
		return nil, err
	}
	return &shard.IntersectGrads{Vertices: Narrow(res.Vertices), Origins: Narrow(res.Origins), Directions: Narrow(res.Directions)}, nil
}

// Refit refits the reference BVH to the updated tables.
func (e *Engine) Refit(ctx context.Context, _ int, _ []float32) error {
	e.s.Refit()
	return ctx.Err()
}

// SetEdgeMask has nothing to do: the queries read the façade's table.
func (e *Engine) SetEdgeMask(ctx context.Context, _ engine.Edges) error { return ctx.Err() }

// Rebuild rebuilds the reference scene from the tables.
func (e *Engine) Rebuild(ctx context.Context) error {
	s, err := ref.NewScene(e.tables)
	if err != nil {
		return err
	}
	e.s = s
	return ctx.Err()
}

// Close releases nothing.
func (e *Engine) Close() error { return nil }

// Narrow converts float64 values to float32.
func Narrow(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}
