package ref

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minChunk is the smallest number of rows handed to one goroutine at a time.
const minChunk = 256

// parallelRows calls body on disjoint row ranges covering [0, n), using up to
// runtime.GOMAXPROCS goroutines that take chunks in turn. Rows are
// independent, so the result does not depend on the schedule.
func parallelRows(n int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers <= 1 || n <= minChunk {
		body(0, n)
		return
	}
	chunk := max(minChunk, (n+4*workers-1)/(4*workers))
	workers = min(workers, (n+chunk-1)/chunk)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				body(lo, min(lo+chunk, n))
			}
		})
	}
	wg.Wait()
}
