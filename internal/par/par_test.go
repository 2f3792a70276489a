package par

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRowsCoversEveryRowOnce(t *testing.T) {
	for _, c := range []struct{ n, block int }{{0, 4}, {1, 4}, {7, 3}, {1000, 1}, {100000, 256}, {5, 0}} {
		seen := make([]int32, c.n)
		err := Rows(context.Background(), c.n, c.block, func(lo, hi int) {
			assert.LessOrEqual(t, hi-lo, max(c.block, 1))
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
		})
		require.NoError(t, err)
		for i, v := range seen {
			if v != 1 {
				t.Fatalf("n %d block %d: row %d ran %d times", c.n, c.block, i, v)
			}
		}
	}
}

func TestRowsStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var blocks atomic.Int64
	err := Rows(ctx, 1<<20, 1, func(lo, hi int) {
		if blocks.Add(1) == 10 {
			cancel()
		}
		time.Sleep(200 * time.Microsecond)
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, blocks.Load(), int64(10+2*runtime.GOMAXPROCS(0)), "no new block after the cancel")
}

func TestRowsHonoursADeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := Rows(ctx, 1<<30, 1, func(lo, hi int) { time.Sleep(100 * time.Microsecond) })
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Less(t, time.Since(t0), time.Second)
}

func TestRowsOnADoneContextRunsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	require.ErrorIs(t, Rows(ctx, 10, 1, func(int, int) { ran = true }), context.Canceled)
	assert.False(t, ran)
}
