package engine

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Crossings is the all-hits segment query: every triangle hit along each
// segment under Visible's segment rule, the k least by (t, global prim id)
// kept, with the total count (geom.Crossings). The façade has validated
// the segments and k (geom.CheckCrossings).
type Crossings interface {
	Crossings(ctx context.Context, start, end []float32, active []bool, k int) (*geom.Crossings, error)
}
