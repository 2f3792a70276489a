package simdev

import (
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/shard"
)

// The simulated nearest-edge kernels run package edge's CPU reference over
// the launch's rows on the replica's own edge scene: its edge table, its
// vertices as of the last SyncGeometry and its edge mask (SetEdgeMask). A
// row's answer depends on that row and the scene alone, so the placed parts
// of a sharded call are bitwise one reference run over the whole batch.

// pointEdgeKernel runs nearest_edge.
type pointEdgeKernel struct{ *shard.NearestEdge }

func (k pointEdgeKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in, _ := rowWidths(k.Op())
	return &shard.NearestEdge{Points: clone(s.Points, copied), Active: clone(s.Active, copied)}, in * (hi - lo)
}

func (k pointEdgeKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.NearestEdge)
	return d.edgeScene().NearestPoint(t.Points, t.Active)
}

func (k pointEdgeKernel) Output(out any, copied bool) (any, int) {
	r := out.(*edge.PointResult)
	if copied {
		r = &edge.PointResult{Distance: clone(r.Distance, true), EdgePoint: clone(r.EdgePoint, true),
			EdgeT: clone(r.EdgeT, true), ShapeID: clone(r.ShapeID, true), EdgeID: clone(r.EdgeID, true),
			GlobalEdgeID: clone(r.GlobalEdgeID, true)}
	}
	return r, k.OutputBytes(0, r.Len())
}

func (k pointEdgeKernel) OutputBytes(lo, hi int) int {
	_, out := rowWidths(k.Op())
	return out * (hi - lo)
}

func (pointEdgeKernel) Add(_, _ any) (any, error) { return nil, errPlaced }

// rayEdgeKernel runs nearest_edge_ray.
type rayEdgeKernel struct{ *shard.NearestEdgeRay }

func (k rayEdgeKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in, _ := rowWidths(k.Op())
	return &shard.NearestEdgeRay{O: clone(s.O, copied), D: clone(s.D, copied), TMax: clone(s.TMax, copied),
		Active: clone(s.Active, copied)}, in * (hi - lo)
}

func (k rayEdgeKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.NearestEdgeRay)
	return d.edgeScene().NearestRay(t.O, t.D, t.TMax, t.Active)
}

func (k rayEdgeKernel) Output(out any, copied bool) (any, int) {
	r := out.(*edge.RayResult)
	if copied {
		r = &edge.RayResult{Distance: clone(r.Distance, true), RayT: clone(r.RayT, true), Point: clone(r.Point, true),
			EdgeT: clone(r.EdgeT, true), EdgePoint: clone(r.EdgePoint, true), ShapeID: clone(r.ShapeID, true),
			EdgeID: clone(r.EdgeID, true), GlobalEdgeID: clone(r.GlobalEdgeID, true)}
	}
	return r, k.OutputBytes(0, r.Len())
}

func (k rayEdgeKernel) OutputBytes(lo, hi int) int {
	_, out := rowWidths(k.Op())
	return out * (hi - lo)
}

func (rayEdgeKernel) Add(_, _ any) (any, error) { return nil, errPlaced }

// topKKernel runs nearest_edges (K slots per row).
type topKKernel struct{ *shard.NearestEdges }

func (k topKKernel) Input(lo, hi int, copied bool) (any, int) {
	s := k.Slice(lo, hi)
	in, _ := rowWidths(k.Op())
	return &shard.NearestEdges{Points: clone(s.Points, copied), K: s.K, Active: clone(s.Active, copied)}, in * (hi - lo)
}

func (k topKKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.NearestEdges)
	return d.edgeScene().NearestK(t.Points, t.K, t.Active)
}

func (k topKKernel) Output(out any, copied bool) (any, int) {
	r := out.(*edge.TopK)
	if copied {
		r = &edge.TopK{K: r.K, Valid: clone(r.Valid, true), Distance: clone(r.Distance, true), Point: clone(r.Point, true),
			EdgeT: clone(r.EdgeT, true), EdgePoint: clone(r.EdgePoint, true), ShapeID: clone(r.ShapeID, true),
			EdgeID: clone(r.EdgeID, true), GlobalEdgeID: clone(r.GlobalEdgeID, true), Boundary: clone(r.Boundary, true)}
	}
	return r, k.OutputBytes(0, r.Len())
}

// OutputBytes is K slots of the top-k record per row.
func (k topKKernel) OutputBytes(lo, hi int) int { _, out := rowWidths(k.Op()); return out * (hi - lo) }

func (topKKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
