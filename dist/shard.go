package dist

import "fmt"

// LaneAlign is the warp alignment of Monte-Carlo lane windows.
const LaneAlign = 32

// ShardBounds returns rank's contiguous share [begin, end) of n rows split
// over world ranks: the first n mod world ranks get one row more, so the
// shards partition [0, n) in rank order and differ in size by at most one.
// It panics on world < 1, rank outside [0, world) or n < 0.
func ShardBounds(n, rank, world int) (begin, end int) {
	checkRank(rank, world)
	if n < 0 {
		panic(fmt.Sprintf("dist: ShardBounds: negative row count %d", n))
	}
	base, rem := n/world, n%world
	begin = rank*base + min(rank, rem)
	end = begin + base
	if rank < rem {
		end++
	}
	return begin, end
}

// LaneTotal is the lane space a sharded accumulation launches for requested
// samples over world ranks: the smallest multiple of LaneAlign·world that is
// at least max(requested, 1).
func LaneTotal(requested, world int) int {
	checkRank(0, world)
	unit := LaneAlign * world
	return max(1, (max(requested, 1)+unit-1)/unit) * unit
}

// LaneWindow returns rank's window [begin, begin+count) of the lane space
// LaneTotal(requested, world): every rank but the last gets the same
// warp-aligned count, the last takes the rest, and the windows cover the
// whole space in rank order.
func LaneWindow(requested, rank, world int) (begin, count, total int) {
	checkRank(rank, world)
	total = LaneTotal(requested, world)
	per := total / world
	per -= per % LaneAlign
	begin = rank * per
	count = per
	if rank == world-1 {
		count = total - begin
	}
	return begin, count, total
}

func checkRank(rank, world int) {
	if world < 1 || rank < 0 || rank >= world {
		panic(fmt.Sprintf("dist: rank %d of world %d", rank, world))
	}
}
