package cpu

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Crossings runs the reference's crossings query (its BVH walk).
func (e *Engine) Crossings(ctx context.Context, start, end []float32, active []bool, k int) (*geom.Crossings, error) {
	return e.s.CrossingsContext(ctx, start, end, active, k)
}
