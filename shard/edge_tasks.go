package shard

import (
	"fmt"
	"strconv"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
)

// The nearest-edge queries are per_ray operations (multi-device spec §2:
// every row's answer depends on that row and the scene alone), sharded like
// intersect: a replica answers its rows over its own edge table and mask
// (the mask arrives by the SetEdgeMask broadcast), and the parts are placed
// in row order, bitwise the single-device record.

// Byte widths of the edge records (operations spec §5): a point row returns
// 32 bytes (distance, edge point, edge t and three ids), a ray row 48 (ray t
// and the closest point on the ray too), and a top-k slot 46 (valid and
// boundary flags, distance, query point, edge t, edge point and three ids).
const (
	edgePointOutBytes = 32
	edgeRayOutBytes   = 48
	edgeSlotOutBytes  = 46
	pointInBytes      = 12
)

// NearestEdgeOp is the byte model of nearest_edge.
func NearestEdgeOp() Op {
	return Op{Key: OpNearestEdge, Class: PerRay, RowBytes: edgePointOutBytes, ResultRowBytes: edgePointOutBytes,
		TransferRowBytes: pointInBytes + edgePointOutBytes}
}

// NearestEdgeRayOp is the byte model of nearest_edge_ray.
func NearestEdgeRayOp() Op {
	return Op{Key: OpNearestEdgeRay, Class: PerRay, RowBytes: edgeRayOutBytes, ResultRowBytes: edgeRayOutBytes,
		TransferRowBytes: rayTmaxInBytes + edgeRayOutBytes}
}

// NearestEdgesOp is the byte model of nearest_edges with k slots per row:
// key "nearest_edges:<k>".
func NearestEdgesOp(k int) Op {
	out := edgeSlotOutBytes * max(k, 1)
	return Op{Key: OpNearestEdges + ":" + strconv.Itoa(k), Class: PerRay, RowBytes: out, ResultRowBytes: out,
		TransferRowBytes: pointInBytes + out}
}

// NearestEdge is the nearest_edge task: query points (3 per row) and an
// optional active mask (empty: all active).
type NearestEdge struct {
	Points []float32
	Active []bool
}

// Op returns NearestEdgeOp().
func (t *NearestEdge) Op() Op { return NearestEdgeOp() }

// Rows validates the batch (edge.CheckPointBatch).
func (t *NearestEdge) Rows() (int, error) { return edge.CheckPointBatch(t.Points, t.Active) }

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *NearestEdge) Slice(lo, hi int) *NearestEdge {
	return &NearestEdge{Points: t.Points[3*lo : 3*hi], Active: rows1(t.Active, lo, hi)}
}

// Assemble places the parts' rows in row order.
func (t *NearestEdge) Assemble(total int, parts []Part[*edge.PointResult]) (*edge.PointResult, error) {
	r := edge.NewPointResult(total)
	for _, p := range parts {
		c := p.Record
		if c.Len() != p.Stop-p.Start {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows", OpNearestEdge, p.Start, p.Stop, c.Len())
		}
		place(r.Distance, c.Distance, p.Start, 1)
		place(r.EdgePoint, c.EdgePoint, p.Start, 3)
		place(r.EdgeT, c.EdgeT, p.Start, 1)
		place(r.ShapeID, c.ShapeID, p.Start, 1)
		place(r.EdgeID, c.EdgeID, p.Start, 1)
		place(r.GlobalEdgeID, c.GlobalEdgeID, p.Start, 1)
	}
	return r, nil
}

// RecordRowBytes is 32.
func (t *NearestEdge) RecordRowBytes(*edge.PointResult) int { return edgePointOutBytes }

// NearestEdgeRay is the nearest_edge_ray task: rays (segments for a finite
// per-row TMax, half rays otherwise) with an optional active mask.
type NearestEdgeRay struct {
	O, D, TMax []float32
	Active     []bool
}

// Op returns NearestEdgeRayOp().
func (t *NearestEdgeRay) Op() Op { return NearestEdgeRayOp() }

// Rows validates the batch (geom.CheckRays).
func (t *NearestEdgeRay) Rows() (int, error) { return geom.CheckRays(t.O, t.D, t.TMax, t.Active) }

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *NearestEdgeRay) Slice(lo, hi int) *NearestEdgeRay {
	return &NearestEdgeRay{O: t.O[3*lo : 3*hi], D: t.D[3*lo : 3*hi], TMax: rows1(t.TMax, lo, hi), Active: rows1(t.Active, lo, hi)}
}

// Assemble places the parts' rows in row order.
func (t *NearestEdgeRay) Assemble(total int, parts []Part[*edge.RayResult]) (*edge.RayResult, error) {
	r := edge.NewRayResult(total)
	for _, p := range parts {
		c := p.Record
		if c.Len() != p.Stop-p.Start {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows", OpNearestEdgeRay, p.Start, p.Stop, c.Len())
		}
		place(r.Distance, c.Distance, p.Start, 1)
		place(r.RayT, c.RayT, p.Start, 1)
		place(r.Point, c.Point, p.Start, 3)
		place(r.EdgeT, c.EdgeT, p.Start, 1)
		place(r.EdgePoint, c.EdgePoint, p.Start, 3)
		place(r.ShapeID, c.ShapeID, p.Start, 1)
		place(r.EdgeID, c.EdgeID, p.Start, 1)
		place(r.GlobalEdgeID, c.GlobalEdgeID, p.Start, 1)
	}
	return r, nil
}

// RecordRowBytes is 48.
func (t *NearestEdgeRay) RecordRowBytes(*edge.RayResult) int { return edgeRayOutBytes }

// NearestEdges is the nearest_edges (top-k) task: K slots per query point.
type NearestEdges struct {
	Points []float32
	K      int
	Active []bool
}

// Op returns NearestEdgesOp(t.K).
func (t *NearestEdges) Op() Op { return NearestEdgesOp(t.K) }

// Rows validates k and the batch.
func (t *NearestEdges) Rows() (int, error) {
	if err := edge.CheckK(t.K); err != nil {
		return 0, err
	}
	return edge.CheckPointBatch(t.Points, t.Active)
}

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *NearestEdges) Slice(lo, hi int) *NearestEdges {
	return &NearestEdges{Points: t.Points[3*lo : 3*hi], K: t.K, Active: rows1(t.Active, lo, hi)}
}

// Assemble places the parts' slots in row order.
func (t *NearestEdges) Assemble(total int, parts []Part[*edge.TopK]) (*edge.TopK, error) {
	r := edge.NewTopK(total, t.K)
	k := t.K
	for _, p := range parts {
		c := p.Record
		if c.K != k || c.Len() != p.Stop-p.Start {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows of %d slots", OpNearestEdges, p.Start, p.Stop, c.Len(), c.K)
		}
		place(r.Valid, c.Valid, p.Start, k)
		place(r.Distance, c.Distance, p.Start, k)
		place(r.Point, c.Point, p.Start, 3*k)
		place(r.EdgeT, c.EdgeT, p.Start, k)
		place(r.EdgePoint, c.EdgePoint, p.Start, 3*k)
		place(r.ShapeID, c.ShapeID, p.Start, k)
		place(r.EdgeID, c.EdgeID, p.Start, k)
		place(r.GlobalEdgeID, c.GlobalEdgeID, p.Start, k)
		place(r.Boundary, c.Boundary, p.Start, k)
	}
	return r, nil
}

// RecordRowBytes is 46 bytes per slot.
func (t *NearestEdges) RecordRowBytes(*edge.TopK) int { return edgeSlotOutBytes * t.K }
