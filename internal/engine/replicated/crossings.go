package replicated

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// Crossings shards the crossings query by rows (shard.Crossings); every
// replica answers its rows over its own BVH and the parts are placed in
// row order, bitwise the single-device record.
func (e *Engine) Crossings(ctx context.Context, start, end []float32, active []bool, k int) (*geom.Crossings, error) {
	return shard.RunRows(ctx, e.l, &shard.Crossings{Start: start, End: end, Active: active, K: k})
}
