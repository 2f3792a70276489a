package rayd

import (
	"context"
	"fmt"
	"slices"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
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
// meshes (meshes with EdgesDisabled contribute none). On a CUDA scene
// (BVH or OptiX) the queries run on the GPU over an edge BVH built on the
// first edge query and refitted after vertex updates; on a replicated scene
// every replica answers its rows over its own edge BVH and the broadcast
// mask; on the CPU backend they run on the host, where large batches go
// through package edge's Index on every core. Every path computes in
// float64 and gives the brute-force scan's results bit for bit, ties to the
// lowest global edge id. The backward passes run on the same engines
// (device float64 rows with float64 atomic vertex sums; a replicated scene
// adds the per-chunk vertex partials in row order).

// edgeScene returns the scene's edge table, building it on first use. The
// caller holds s.mu (shared or exclusive).
func (s *Scene) edgeScene() *edge.Scene {
	s.edgeOnce.Do(func() { s.edges = edge.NewScene(s.tables) })
	return s.edges
}

// edgeEnter read-locks the scene for an edge query and returns the edge
// state the engines take.
func (s *Scene) edgeEnter(ctx context.Context) (engine.Edges, error) {
	if err := s.rlock(ctx); err != nil {
		return engine.Edges{}, err
	}
	return engine.Edges{Scene: s.edgeScene(), Gen: s.edgeGen}, nil
}

// NumEdges returns the number of edges E of the scene (the length of an
// edge mask).
func (s *Scene) NumEdges() int {
	ed, err := s.edgeEnter(context.Background())
	if err != nil {
		return 0
	}
	defer s.mu.RUnlock()
	return ed.Scene.Edges.Len()
}

// EdgeTable is the scene's edge table (spec §1.3), one entry per global
// edge id: the endpoints V0 < V1 (global vertex ids), the incident faces
// Face0 and Face1 (mesh-local face ids; Face1 −1 on a boundary edge), the
// vertex Opposite the edge in Face0 (global id), IsBoundary, and the
// edge's mesh (ShapeID) and index in that mesh's edge list (LocalID).
type EdgeTable struct {
	V0, V1, Face0, Face1, Opposite []int32
	IsBoundary                     []bool
	ShapeID, LocalID               []int32
}

// Len is the number of edges.
func (t *EdgeTable) Len() int { return len(t.V0) }

// Edges returns a copy of the scene's edge table.
func (s *Scene) Edges() (*EdgeTable, error) {
	ed, err := s.edgeEnter(context.Background())
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	e := ed.Scene.Edges
	t := &EdgeTable{V0: slices.Clone(e.V0), V1: slices.Clone(e.V1), Face0: slices.Clone(e.Face0),
		Face1: slices.Clone(e.Face1), Opposite: slices.Clone(e.Opposite), IsBoundary: make([]bool, e.Len()),
		ShapeID: slices.Clone(e.ShapeID), LocalID: slices.Clone(e.LocalID)}
	for i := range t.IsBoundary {
		t.IsBoundary[i] = e.IsBoundary(i)
	}
	return t, nil
}

// SetEdgeMask installs a copy of mask (one entry per edge, false removes
// the edge from every edge query; nil or empty clears it). A mask of
// another length is a *geom.LengthError and changes nothing. The mask
// survives vertex updates (the edge table does not change). On a replicated
// scene it is broadcast to every replica; a failed broadcast leaves the
// mask unchanged and the replicas refusing work until Rebuild.
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
	if err := s.eng.SetEdgeMask(ctx, engine.Edges{Scene: es, Gen: s.edgeGen + 1}); err != nil {
		es.Mask = old
		return err
	}
	s.edgeGen++
	return nil
}

// EdgeMask returns a copy of the edge mask (nil: every edge enabled).
func (s *Scene) EdgeMask() []bool {
	ed, err := s.edgeEnter(context.Background())
	if err != nil {
		return nil
	}
	defer s.mu.RUnlock()
	return slices.Clone(ed.Scene.Mask)
}

// NearestEdge finds the nearest enabled edge of every point (3 float32 per
// row; spec §5.1). A row with a non-finite coordinate, or a scene without
// enabled edges, gives the miss record.
func (s *Scene) NearestEdge(ctx context.Context, points []float32) (*NearestPointEdge, error) {
	if _, err := edge.CheckPointBatch(points, nil); err != nil {
		return nil, err
	}
	ed, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.NearestEdge(ctx, ed, points, nil)
}

// NearestEdgeRay finds the enabled edge nearest to every ray's query set
// (spec §5.2): the segment o + t·d, t ∈ [0, TMax] for a finite TMax, the
// half ray t ≥ 0 without TMax or for +Inf. Directions are not normalized;
// inactive rows, non-finite rows and a NaN TMax give the miss record. The
// query traces no triangle: Rays.TMin and Rays.Mask are refused
// (ErrInvalidArgument).
func (s *Scene) NearestEdgeRay(ctx context.Context, r Rays) (*NearestRayEdge, error) {
	if _, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active); err != nil {
		return nil, err
	}
	if err := checkUntracedRays("NearestEdgeRay", r); err != nil {
		return nil, err
	}
	ed, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.NearestEdgeRay(ctx, ed, r.engine())
}

// NearestEdges finds the k nearest enabled edges of every point (spec
// §5.3), 1 ≤ k ≤ MaxEdgesK (a *geom.ArgumentError otherwise), ordered by
// ascending (distance², global edge id). active is nil or one flag per row.
func (s *Scene) NearestEdges(ctx context.Context, points []float32, k int, active []bool) (*NearestEdgesTopK, error) {
	n, err := edge.CheckPointBatch(points, active)
	if err != nil {
		return nil, err
	}
	if err := edge.CheckTopK(n, k, geom.HostMemoryLimit()); err != nil {
		return nil, err
	}
	ed, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.NearestEdges(ctx, ed, points, k, active)
}

// NearestEdgeVJP is the backward pass of NearestEdge (spec §5.7) with each
// row's edge frozen: the gradients with respect to the points (3 per row)
// and to the scene's vertices (3 per global vertex), in float64.
func (s *Scene) NearestEdgeVJP(ctx context.Context, points []float32, res *NearestPointEdge, g EdgePointCotangent) (dPoints, dVertices []float64, err error) {
	if res == nil {
		return nil, nil, fmt.Errorf("%w: the backward pass needs the forward record", ErrInvalidArgument)
	}
	t := &shard.NearestEdgeVJP{Points: points, GlobalEdgeID: res.GlobalEdgeID, G: g, Vertices: s.tables.NumVertices()}
	if _, err := t.Rows(); err != nil {
		return nil, nil, err
	}
	ed, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer s.mu.RUnlock()
	r, err := s.eng.NearestEdgeVJP(ctx, ed, points, res.GlobalEdgeID, g)
	if err != nil || r == nil {
		return nil, nil, err
	}
	return r.Points, r.Vertices, nil
}

// NearestEdgeRayVJP is the backward pass of NearestEdgeRay (spec §5.7) with
// each row's edge frozen: the gradients with respect to the origins, the
// directions (3 per row) and the vertices (3 per global vertex).
func (s *Scene) NearestEdgeRayVJP(ctx context.Context, r Rays, res *NearestRayEdge, g EdgeRayCotangent) (dOrigins, dDirections, dVertices []float64, err error) {
	if res == nil {
		return nil, nil, nil, fmt.Errorf("%w: the backward pass needs the forward record", ErrInvalidArgument)
	}
	if err := checkUntracedRays("NearestEdgeRayVJP", r); err != nil {
		return nil, nil, nil, err
	}
	t := &shard.NearestEdgeRayVJP{O: r.Origins, D: r.Directions, TMax: r.TMax, GlobalEdgeID: res.GlobalEdgeID, G: g,
		Vertices: s.tables.NumVertices()}
	if _, err := t.Rows(); err != nil {
		return nil, nil, nil, err
	}
	ed, err := s.edgeEnter(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer s.mu.RUnlock()
	out, err := s.eng.NearestEdgeRayVJP(ctx, ed, r.engine(), res.GlobalEdgeID, g)
	if err != nil || out == nil {
		return nil, nil, nil, err
	}
	return out.Origins, out.Directions, out.Vertices, nil
}
