// Package par runs the row loops of the CPU reference packages (ref, edge)
// on every core while honouring a context: rows are handed out in blocks
// and no new block starts once the context is done, so a cancelled or
// expired call returns within one block's time however large the batch.
//
// Place in the package graph: a leaf (standard library only), used by the
// pure-Go reference packages.
package par

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Rows calls body on disjoint blocks [lo, hi) of at most block rows that
// cover [0, n), on up to runtime.GOMAXPROCS goroutines taking blocks in
// turn (block < 1 means 1). Before each block a goroutine checks ctx: once
// ctx is done no new block starts, the running blocks finish, and Rows
// returns ctx.Err(); rows of blocks never started are left untouched.
// Otherwise it returns nil after every row ran. Rows must be independent:
// the schedule is not deterministic.
func Rows(ctx context.Context, n, block int, body func(lo, hi int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	block = max(block, 1)
	var next atomic.Int64
	cancellable := ctx.Done() != nil
	work := func() {
		for !cancellable || ctx.Err() == nil {
			lo := next.Add(int64(block)) - int64(block)
			if lo >= int64(n) {
				return
			}
			body(int(lo), int(min(lo+int64(block), int64(n))))
		}
	}
	workers := min(runtime.GOMAXPROCS(0), (n+block-1)/block)
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	if next.Load() < int64(n) {
		return ctx.Err() // a block was never started: the context is done
	}
	return nil
}
