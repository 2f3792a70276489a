package replicated

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// ClosestPoint shards the closest-point query; each replica answers its
// rows over its own triangle BVH.
func (e *Engine) ClosestPoint(ctx context.Context, points []float32, maxDist float32, active []bool) (*geom.ClosestPoints, error) {
	return shard.RunRows(ctx, e.l, &shard.ClosestPoint{Points: points, MaxDist: maxDist, Active: active})
}
