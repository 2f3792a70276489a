package replicated

import (
	"context"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/shard"
)

// Every host query is one shard task run by the layer (shard.RunRows):
// planned by weight and floor, chunked when a chunking knob asks, streamed
// through Options.Offload when set (the call then returns the zero
// record), and recorded in LastDispatch.

// Intersect shards intersect.
func (e *Engine) Intersect(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	return shard.RunRows(ctx, e.l, &shard.Intersect{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active, Flags: flags,
		TMin: r.TMin, Mask: r.Mask})
}

// TraceReflections shards trace_reflections.
func (e *Engine) TraceReflections(ctx context.Context, r engine.Rays, b int) (*geom.Reflections, error) {
	return shard.RunRows(ctx, e.l, &shard.TraceReflections{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active, Bounces: b,
		TMin: r.TMin, Mask: r.Mask})
}

// Visible shards visible.
func (e *Engine) Visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	return shard.RunRows(ctx, e.l, &shard.Visible{Start: start, End: end, Active: active})
}

// VisiblePair shards visible_pair by rows.
func (e *Engine) VisiblePair(ctx context.Context, b *geom.SegmentBatch) (*geom.PairVisibility, error) {
	return shard.RunRows(ctx, e.l, shard.PairTask(b))
}

// VisibleEdge shards visible_edge by rows.
func (e *Engine) VisibleEdge(ctx context.Context, b *geom.SegmentBatch) ([]bool, error) {
	return shard.RunRows(ctx, e.l, shard.EdgeVisibilityTask(b))
}

// VisibleChain shards visible_chain by rows.
func (e *Engine) VisibleChain(ctx context.Context, b *geom.SegmentBatch) (*geom.ChainVisibility, error) {
	return shard.RunRows(ctx, e.l, shard.ChainTask(b))
}

// NearestEdge shards the point query; each replica answers over its own
// edge table and the broadcast mask.
func (e *Engine) NearestEdge(ctx context.Context, _ engine.Edges, points []float32, active []bool) (*edge.PointResult, error) {
	return shard.RunRows(ctx, e.l, &shard.NearestEdge{Points: points, Active: active})
}

// NearestEdgeRay shards the ray/segment query.
func (e *Engine) NearestEdgeRay(ctx context.Context, _ engine.Edges, r engine.Rays) (*edge.RayResult, error) {
	return shard.RunRows(ctx, e.l, &shard.NearestEdgeRay{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active})
}

// NearestEdges shards the top-k query.
func (e *Engine) NearestEdges(ctx context.Context, _ engine.Edges, points []float32, k int, active []bool) (*edge.TopK, error) {
	return shard.RunRows(ctx, e.l, &shard.NearestEdges{Points: points, K: k, Active: active})
}

// NearestEdgeVJP shards the rows of the point backward pass and sums the
// vertex partials on the host in row order.
func (e *Engine) NearestEdgeVJP(ctx context.Context, _ engine.Edges, points []float32, gid []int32, g edge.PointCotangent) (*shard.EdgePointGrads, error) {
	return shard.RunRows(ctx, e.l, &shard.NearestEdgeVJP{Points: points, GlobalEdgeID: gid, G: g, Vertices: e.tables.NumVertices()})
}

// NearestEdgeRayVJP shards the rows of the ray backward pass.
func (e *Engine) NearestEdgeRayVJP(ctx context.Context, _ engine.Edges, r engine.Rays, gid []int32, g edge.RayCotangent) (*shard.EdgeRayGrads, error) {
	return shard.RunRows(ctx, e.l, &shard.NearestEdgeRayVJP{O: r.Origins, D: r.Directions, TMax: r.TMax, GlobalEdgeID: gid, G: g,
		Vertices: e.tables.NumVertices()})
}

// IntersectVJP shards the rows of the intersect backward pass.
func (e *Engine) IntersectVJP(ctx context.Context, r engine.Rays, prim []int32, uv []float32, g geom.IntersectCotangents) (*shard.IntersectGrads, error) {
	return shard.RunRows(ctx, e.l, &shard.IntersectVJP{O: r.Origins, D: r.Directions, Active: r.Active, Prim: prim, UV: uv, G: g,
		Vertices: e.tables.NumVertices()})
}

// Devices returns the layer's device list.
func (e *Engine) Devices() []int { return e.l.Devices() }

// LastDispatch is the layer's latest dispatch record.
func (e *Engine) LastDispatch() *shard.DispatchRecord { return e.l.LastDispatch() }

// LastChunkPlan is the layer's latest chunk plan.
func (e *Engine) LastChunkPlan() *shard.ChunkPlan { return e.l.LastChunkPlan() }

// Weights resolves op's split.
func (e *Engine) Weights(op string) ([]float64, error) { return e.l.WeightsFor(op) }
