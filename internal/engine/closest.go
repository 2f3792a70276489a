package engine

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Closest is the closest-point query of an engine: for every query point
// (3 values per row) the face nearest to it within maxDist, in float64
// with ties to the lowest global face id (ref.Scene.ClosestPoints is the
// oracle, bit for bit). maxDist ≤ 0 or +Inf is unbounded; active is empty
// or one flag per row. The façade has validated the batch.
type Closest interface {
	ClosestPoint(ctx context.Context, points []float32, maxDist float32, active []bool) (*geom.ClosestPoints, error)
}
