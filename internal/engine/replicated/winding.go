package replicated

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// WindingSums shards the winding sums by rows (shard.WindingSums); every
// replica sums every face for its rows, so the work per replica is its
// rows × faces.
func (e *Engine) WindingSums(ctx context.Context, points []float32, active []bool) (*geom.WindingSums, error) {
	return shard.RunRows(ctx, e.l, &shard.WindingSums{Points: points, Active: active})
}
