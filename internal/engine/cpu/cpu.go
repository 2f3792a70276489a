// Package cpu is the engine of rayd-go's CPU backend: every operation runs
// the pure-Go references (ref for the triangle queries, edge for the
// nearest-edge queries, rf for the RF operations) in float64 or in the
// contract's float32 arithmetic, on every core. It is the oracle the GPU
// engines are tested against and the backend of a machine without a GPU.
// The references run rows in blocks and honour cancellation between them.
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
	inst   *ref.InstancedScene // nil until SetInstances
}

var _ engine.Engine = (*Engine)(nil)

// New builds the reference scene (its BVH) over t. The engine reads t at
// every query: the façade updates it in place and calls Refit.
func New(ctx context.Context, t *geom.Tables) (*Engine, error) {
	s, err := ref.NewSceneContext(ctx, t)
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

// Intersect runs the reference's intersect, which checks ctx between row
// blocks.
func (e *Engine) Intersect(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	return e.s.IntersectLimitsContext(ctx, r.Origins, r.Directions, r.TMax, r.Active, r.Limits(), flags)
}

// TraceReflections runs the reference's trace_reflections.
func (e *Engine) TraceReflections(ctx context.Context, r engine.Rays, bounces int) (*geom.Reflections, error) {
	return e.s.TraceReflectionsLimitsContext(ctx, r.Origins, r.Directions, r.TMax, r.Active, r.Limits(), bounces)
}

// Visible runs the reference's visible.
func (e *Engine) Visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	return e.s.VisibleContext(ctx, start, end, active)
}

// blockers is the reference's segment query under ctx.
func (e *Engine) blockers(ctx context.Context) geom.SegmentBlockers {
	return func(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
		return e.s.SegmentBlockersContext(ctx, start, end, active, ignore, k)
	}
}

// VisiblePair answers visible_pair on the reference.
func (e *Engine) VisiblePair(ctx context.Context, b *geom.SegmentBatch) (*geom.PairVisibility, error) {
	blk, err := b.Query(e.blockers(ctx), 0, b.Rows)
	if err != nil {
		return nil, err
	}
	return geom.PairFinish(b, 0, b.Rows, blk)
}

// VisibleEdge answers visible_edge on the reference.
func (e *Engine) VisibleEdge(ctx context.Context, b *geom.SegmentBatch) ([]bool, error) {
	blk, err := b.Query(e.blockers(ctx), 0, b.Rows)
	if err != nil {
		return nil, err
	}
	return geom.EdgeFinish(b, 0, b.Rows, blk)
}

// VisibleChain answers visible_chain on the reference.
func (e *Engine) VisibleChain(ctx context.Context, b *geom.SegmentBatch) (*geom.ChainVisibility, error) {
	blk, err := b.Query(e.blockers(ctx), 0, b.Rows)
	if err != nil {
		return nil, err
	}
	return geom.ChainFinish(b, 0, b.Rows, blk)
}

// NearestEdge runs the edge package's query (its Index on large batches).
func (e *Engine) NearestEdge(ctx context.Context, ed engine.Edges, points []float32, active []bool) (*edge.PointResult, error) {
	return ed.Scene.NearestPointContext(ctx, points, active)
}

// NearestEdgeRay runs the edge package's ray query.
func (e *Engine) NearestEdgeRay(ctx context.Context, ed engine.Edges, r engine.Rays) (*edge.RayResult, error) {
	return ed.Scene.NearestRayContext(ctx, r.Origins, r.Directions, r.TMax, r.Active)
}

// NearestEdges runs the edge package's top-k query.
func (e *Engine) NearestEdges(ctx context.Context, ed engine.Edges, points []float32, k int, active []bool) (*edge.TopK, error) {
	return ed.Scene.NearestKContext(ctx, points, k, active)
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
	s, err := ref.NewSceneContext(ctx, e.tables)
	if err != nil {
		return err
	}
	e.s = s
	return nil
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
