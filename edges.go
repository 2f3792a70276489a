package rayd

import (
	"context"
	"slices"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/shard"
)

// Nearest-edge records (operations spec §5): one row per query point or
// ray; a row that found no edge has distance +Inf and ids −1.
type (
	// NearestPointEdge is the NearestPointEdge record (32 B per row).
	NearestPointEdge = edge.PointResult
	// NearestRayEdge is the NearestRayEdge record (48 B per row).
	NearestRayEdge = edge.RayResult
	// NearestEdgesTopK is the NearestEdgesTopK record, k slots per row.
	NearestEdgesTopK = edge.TopK
	// EdgePointCotangent holds upstream gradients of a NearestPointEdge.
	EdgePointCotangent = edge.PointCotangent
	// EdgeRayCotangent holds upstream gradients of a NearestRayEdge.
	EdgeRayCotangent = edge.RayCotangent
)

// MaxEdgesK is the largest k of NearestEdges.
const MaxEdgesK = edge.MaxK

// Edge queries: the scene's edge table (spec §1.3) is built once from its
// meshes (meshes with EdgesDisabled contribute none). On a single-device
// CUDA backend (BVH or OptiX) the queries run on the GPU over an edge BVH
// (accel.EdgeBVH) built on the first edge query and refitted after vertex
// updates; on the CPU backend, and on replicated scenes, they run on the
// host, where large batches go through package edge's Index on every core.
// Both compute in float64 and give the brute-force scan's results bit for
// bit, ties to the lowest global edge id.

// edgeScene returns the scene's edge table, building it on first use. The
// caller holds s.mu (shared or exclusive).
func (s *Scene) edgeScene() *edge.Scene {
	s.edgeOnce.Do(func() { s.edges = edge.NewScene(s.tables) })
	return s.edges
}

// edgeEnter read-locks the scene for an edge query.
func (s *Scene) edgeEnter(ctx context.Context) (*edge.Scene, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	return s.edgeScene(), nil
}

// NumEdges returns the number of edges E of the scene (the length of an
// edge mask).
func (s *Scene) NumEdges() int {
	es, err := s.edgeEnter(context.Background())
	if err != nil {
		return 0
	}
	defer s.mu.RUnlock()
	return es.Edges.Len()
}

// SetEdgeMask installs a copy of mask (one entry per edge, false removes
// the edge from every edge query; nil or empty clears it). A mask of
// another length is a *geom.LengthError and changes nothing. The mask
// survives vertex updates (the edge table does not change). On a replicated
// scene it is broadcast to every replica.
func (s *Scene) SetEdgeMask(ctx context.Context, mask []bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	es := s.edgeScene()
	old := es.Mask
	if err := es.SetMask(mask); err != nil {
		return err
	}
	if s.layer != nil {
		if err := s.layer.Broadcast(ctx, shard.SetEdgeMask{Mask: slices.Clone(es.Mask)}); err != nil {
			es.Mask = old
			return err
		}
	}
	s.edgeGen++
	return nil
}

// EdgeMask returns a copy of the edge mask (nil: every edge enabled).
func (s *Scene) EdgeMask() []bool {
	es, err := s.edgeEnter(context.Background())
	if err != nil {
		return nil
	}
	defer s.mu.RUnlock()
	return slices.Clone(es.Mask)
}

// NearestEdge finds the nearest enabled edge of every point (3 float32 per
// row; spec §5.1). A row with a non-finite coordinate, or a scene without
// enabled edges, gives the miss record.
func (s *Scene) NearestEdge(ctx context.Context, points []float32) (*NearestPointEdge, error) {
	es, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if ee, ok := s.eng.(edgeEngine); ok {
		return ee.nearestEdge(ctx, es, s.edgeGen, points, nil)
	}
	return es.NearestPoint(points, nil)
}

// NearestEdgeRay finds the enabled edge nearest to every ray's query set
// (spec §5.2): the segment o + t·d, t ∈ [0, TMax] for a finite TMax, the
// half ray t ≥ 0 without TMax or for +Inf. Directions are not normalized;
// inactive rows, non-finite rows and a NaN TMax give the miss record.
func (s *Scene) NearestEdgeRay(ctx context.Context, r Rays) (*NearestRayEdge, error) {
	es, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if ee, ok := s.eng.(edgeEngine); ok {
		return ee.nearestEdgeRay(ctx, es, s.edgeGen, r)
	}
	return es.NearestRay(r.Origins, r.Directions, r.TMax, r.Active)
}

// NearestEdges finds the k nearest enabled edges of every point (spec
// §5.3), 1 ≤ k ≤ MaxEdgesK (a *geom.ArgumentError otherwise), ordered by
// ascending (distance², global edge id). active is nil or one flag per row.
func (s *Scene) NearestEdges(ctx context.Context, points []float32, k int, active []bool) (*NearestEdgesTopK, error) {
	es, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if ee, ok := s.eng.(edgeEngine); ok {
		return ee.nearestEdges(ctx, es, s.edgeGen, points, k, active)
	}
	return es.NearestK(points, k, active)
}

// NearestEdgeVJP is the backward pass of NearestEdge (spec §5.7) with each
// row's edge frozen: the gradients with respect to the points (3 per row)
// and to the scene's vertices (3 per global vertex), in float64.
func (s *Scene) NearestEdgeVJP(ctx context.Context, points []float32, res *NearestPointEdge, g EdgePointCotangent) (dPoints, dVertices []float64, err error) {
	es, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer s.mu.RUnlock()
	return es.NearestPointVJP(points, res, g)
}

// NearestEdgeRayVJP is the backward pass of NearestEdgeRay (spec §5.7) with
// each row's edge frozen: the gradients with respect to the origins, the
// directions (3 per row) and the vertices (3 per global vertex).
func (s *Scene) NearestEdgeRayVJP(ctx context.Context, r Rays, res *NearestRayEdge, g EdgeRayCotangent) (dOrigins, dDirections, dVertices []float64, err error) {
	es, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer s.mu.RUnlock()
	return es.NearestRayVJP(r.Origins, r.Directions, r.TMax, res, g)
}
