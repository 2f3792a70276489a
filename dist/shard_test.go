package dist

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShardBoundsPartition is the host-only check of the recipe test: the
// shards of every rank partition [0, N) in rank order.
func TestShardBoundsPartition(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1024, 262144} {
		for _, w := range []int{1, 2, 3, 8} {
			next := 0
			for r := range w {
				b, e := ShardBounds(n, r, w)
				require.Equal(t, next, b, "N=%d W=%d rank %d starts where rank %d ended", n, w, r, r-1)
				require.LessOrEqual(t, b, e)
				size := e - b
				require.True(t, size == n/w || size == n/w+1, "N=%d W=%d rank %d size %d", n, w, r, size)
				next = e
			}
			require.Equal(t, n, next, "N=%d W=%d: shards cover [0, N)", n, w)
		}
	}
	b, e := ShardBounds(7, 2, 3) // base 2, rem 1: [0,3) [3,5) [5,7)
	assert.Equal(t, [2]int{5, 7}, [2]int{b, e})
}

// TestLaneWindows is the host-only lane-window check of the recipe test.
func TestLaneWindows(t *testing.T) {
	for _, req := range []int{1, 31, 1024, 1 << 20, 100000} {
		for _, w := range []int{1, 2, 3, 8} {
			total := LaneTotal(req, w)
			require.GreaterOrEqual(t, total, req)
			require.Zero(t, total%(LaneAlign*w), "req=%d W=%d total=%d", req, w, total)
			next := 0
			for r := range w {
				b, c, tot := LaneWindow(req, r, w)
				require.Equal(t, total, tot)
				require.Equal(t, next, b, "req=%d W=%d rank %d is contiguous", req, w, r)
				require.Positive(t, c, "req=%d W=%d rank %d is non-empty", req, w, r)
				if r < w-1 {
					require.Zero(t, c%LaneAlign, "req=%d W=%d rank %d count %d", req, w, r, c)
				}
				next = b + c
			}
			require.Equal(t, total, next, "req=%d W=%d: windows cover the lane space", req, w)
		}
	}
	assert.Equal(t, 32, LaneTotal(0, 1))
	b, c, total := LaneWindow(100, 1, 2) // total 128, per 64
	assert.Equal(t, [3]int{64, 64, 128}, [3]int{b, c, total})
}

func TestShardArgumentsPanic(t *testing.T) {
	assert.Panics(t, func() { ShardBounds(10, 2, 2) })
	assert.Panics(t, func() { ShardBounds(-1, 0, 2) })
	assert.Panics(t, func() { LaneWindow(10, 0, 0) })
}
