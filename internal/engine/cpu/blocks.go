package cpu

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// BlockRows is the row count of one block of a host batch: small enough
// that cancellation is noticed within a few milliseconds, large enough that
// each block still spreads over every core.
const BlockRows = 1 << 16

// inBlocks validates t, runs fn over consecutive row blocks, checking ctx
// before each, and assembles the blocks with t's own Assemble (a batch of
// one block is returned as is).
func inBlocks[R any](ctx context.Context, t shard.RowTask[R], fn func(lo, hi int) (R, error)) (R, error) {
	var zero R
	n, err := t.Rows()
	if err != nil {
		return zero, err
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if n <= BlockRows {
		return fn(0, n)
	}
	parts := make([]shard.Part[R], 0, (n+BlockRows-1)/BlockRows)
	for lo := 0; lo < n; lo += BlockRows {
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("rayd: %s cancelled at row %d of %d: %w", t.Op().Key, lo, n, err)
		}
		hi := min(lo+BlockRows, n)
		rec, err := fn(lo, hi)
		if err != nil {
			return zero, err
		}
		parts = append(parts, shard.Part[R]{Start: lo, Stop: hi, Record: rec})
	}
	return t.Assemble(n, parts)
}

// segments answers a visibility variant in row blocks of its segment batch.
func segments[R any](ctx context.Context, t *shard.Segments[R], q geom.SegmentBlockers) (R, error) {
	return inBlocks(ctx, t, func(lo, hi int) (R, error) {
		var zero R
		blk, err := t.Batch.Query(q, lo, hi)
		if err != nil {
			return zero, err
		}
		return t.Finish(t.Batch, lo, hi, blk)
	})
}
