package engine

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Winding is the generalized winding number of an engine: for every point
// (3 values per row) the float64 sum of the faces' signed solid angles
// (ref.Scene.WindingSumsContext is the oracle) with a bound on its distance
// from the oracle's sum (0 where the engine computes the oracle itself).
// Inactive and non-finite rows hold NaN sums. The façade has validated the
// batch and decides the signs (geom.WindingSign).
type Winding interface {
	WindingSums(ctx context.Context, points []float32, active []bool) (*geom.WindingSums, error)
}
