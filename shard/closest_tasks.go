package shard

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// OpClosestPoint is the closest-point query (per_ray): each row's face
// depends on that row and the scene alone, so the placed parts of a
// sharded call are bitwise the single-device record.
const OpClosestPoint = "closest_point"

// closestOutBytes is a closest-point row: distance, point and weights (28
// bytes of float32) and three ids.
const closestOutBytes = 40

// ClosestPointOp is the byte model of closest_point.
func ClosestPointOp() Op {
	return Op{Key: OpClosestPoint, Class: PerRay, RowBytes: closestOutBytes, ResultRowBytes: closestOutBytes,
		TransferRowBytes: pointInBytes + closestOutBytes}
}

// ClosestPoint is the closest_point task: query points (3 per row), the
// distance bound (≤ 0 or +Inf: unbounded) and an optional active mask.
type ClosestPoint struct {
	Points  []float32
	MaxDist float32
	Active  []bool
}

// Op returns ClosestPointOp().
func (t *ClosestPoint) Op() Op { return ClosestPointOp() }

// Rows validates the batch and the bound (geom.CheckPoints,
// geom.CheckMaxDist).
func (t *ClosestPoint) Rows() (int, error) {
	n, err := geom.CheckPoints(t.Points, t.Active)
	if err != nil {
		return 0, err
	}
	if _, err := geom.CheckMaxDist(t.MaxDist); err != nil {
		return 0, err
	}
	return n, nil
}

// Slice returns the task restricted to rows [lo, hi), sharing t's memory.
func (t *ClosestPoint) Slice(lo, hi int) *ClosestPoint {
	return &ClosestPoint{Points: t.Points[3*lo : 3*hi], MaxDist: t.MaxDist, Active: rows1(t.Active, lo, hi)}
}

// Assemble places the parts' rows in row order.
func (t *ClosestPoint) Assemble(total int, parts []Part[*geom.ClosestPoints]) (*geom.ClosestPoints, error) {
	r := geom.NewClosestPoints(total)
	for _, p := range parts {
		c := p.Record
		if c.Len() != p.Stop-p.Start {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows", OpClosestPoint, p.Start, p.Stop, c.Len())
		}
		place(r.Dist, c.Dist, p.Start, 1)
		place(r.Point, c.Point, p.Start, 3)
		place(r.Bary, c.Bary, p.Start, 3)
		place(r.ShapeID, c.ShapeID, p.Start, 1)
		place(r.LocalFaceID, c.LocalFaceID, p.Start, 1)
		place(r.GlobalFaceID, c.GlobalFaceID, p.Start, 1)
	}
	return r, nil
}

// RecordRowBytes is 40.
func (t *ClosestPoint) RecordRowBytes(*geom.ClosestPoints) int { return closestOutBytes }

var _ RowTask[*geom.ClosestPoints] = (*ClosestPoint)(nil)
