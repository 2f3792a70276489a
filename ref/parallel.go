package ref

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/internal/par"
)

// blockRows is the number of rows handed to one goroutine at a time; the
// context is checked between blocks, so a cancelled call returns within
// one block's time (about a millisecond on the heavy benchmark scene).
const blockRows = 256

// parallelRows calls body on disjoint row blocks covering [0, n) on up to
// runtime.GOMAXPROCS goroutines, and stops starting blocks once ctx is
// done: the error then names op and wraps ctx.Err(). Rows are independent,
// so the result does not depend on the schedule.
func parallelRows(ctx context.Context, op string, n int, body func(lo, hi int)) error {
	return parallelBlocks(ctx, op, n, blockRows, body)
}

// parallelBlocks is parallelRows with blocks of block rows (a smaller block
// for rows that cost more, so that cancellation stays prompt).
func parallelBlocks(ctx context.Context, op string, n, block int, body func(lo, hi int)) error {
	if err := par.Rows(ctx, n, block, body); err != nil {
		return fmt.Errorf("ref: %s cancelled: %w", op, err)
	}
	return nil
}
