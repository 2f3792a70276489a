package cpu

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// ClosestPoint runs the reference's closest-point query over its BVH.
func (e *Engine) ClosestPoint(ctx context.Context, points []float32, maxDist float32, active []bool) (*geom.ClosestPoints, error) {
	return e.s.ClosestPointsContext(ctx, points, maxDist, active)
}
