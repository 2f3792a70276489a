package shard_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/shard"
)

// sh is a shard of device d at replica index d (layers over devices 0, 1, …).
func sh(d, lo, hi int) shard.Shard { return shard.Shard{Device: d, Replica: d, Start: lo, Stop: hi} }

// §4.2 examples (test_every_covered_op_matches_single_device_at_several_weightings
// checks the same shards through the executor).
func TestRowShardExamples(t *testing.T) {
	two := []int{0, 1}
	require.Equal(t, []shard.Shard{sh(0, 0, 16), sh(1, 16, 33)}, shard.RowShards(two, nil, 33))
	require.Equal(t, []shard.Shard{sh(0, 0, 16), sh(1, 16, 33)}, shard.RowShards(two, []float64{.5, .5}, 33))
	require.Equal(t, []shard.Shard{sh(0, 0, 29), sh(1, 29, 33)}, shard.RowShards(two, []float64{9, 1}, 33))
	require.Equal(t, []shard.Shard{sh(0, 0, 33)}, shard.RowShards(two, []float64{1, 0}, 33))
	require.Equal(t, []shard.Shard{sh(1, 0, 33)}, shard.RowShards(two, []float64{0, 1}, 33))
	require.Equal(t, []shard.Shard{sh(0, 0, 25), sh(1, 25, 100)}, shard.RowShards(two, []float64{1, 3}, 100))
	require.Equal(t, []shard.Shard{sh(0, 0, 91), sh(1, 91, 100)}, shard.RowShards(two, []float64{91, 9}, 100))
	require.Empty(t, shard.RowShards(two, nil, 0))
	// Device order, not ordinal order.
	require.Equal(t, []shard.Shard{{Device: 3, Replica: 0, Start: 0, Stop: 2}, {Device: 1, Replica: 1, Start: 2, Stop: 4}, {Device: 0, Replica: 2, Start: 4, Stop: 7}},
		shard.RowShards([]int{3, 1, 0}, nil, 7))
	// float64 truncation: 3 equal devices over 10 rows → 3, 6, 10.
	require.Equal(t, []shard.Shard{sh(0, 0, 3), sh(1, 3, 6), sh(2, 6, 10)}, shard.RowShards([]int{0, 1, 2}, nil, 10))
}

// The distributed recipe's host-only check, ported to the layer's split:
// shards partition [0, N) for N ∈ {0,1,7,1024,262144} × W ∈ {1,2,3,4,8}.
func TestRowShardsPartition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 33, 1024, 262144, 1<<31 + 5} {
		for _, w := range []int{1, 2, 3, 4, 8} {
			devices := make([]int, w)
			weights := make([]float64, w)
			for i := range w {
				devices[i] = i
				weights[i] = float64(r.IntN(4)) // zeros included
			}
			weights[r.IntN(w)] = 1
			for _, ws := range [][]float64{nil, weights} {
				shards := shard.RowShards(devices, ws, n)
				next := 0
				for i, s := range shards {
					require.Equal(t, next, s.Start)
					require.Greater(t, s.Stop, s.Start)
					if i > 0 {
						require.Greater(t, indexOf(devices, s.Device), indexOf(devices, shards[i-1].Device))
					}
					next = s.Stop
				}
				require.Equal(t, n, next)
			}
		}
	}
}

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// §15.16: near 2^31 rows the float64 boundary agrees with exact integer
// arithmetic for equal weights.
func TestRowShardsNearInt32Limit(t *testing.T) {
	for _, n := range []int{1<<31 - 1, 1 << 31, 1<<31 + 1, 3<<30 + 7} {
		for _, w := range []int{2, 3, 8} {
			devices := make([]int, w)
			for i := range devices {
				devices[i] = i
			}
			shards := shard.RowShards(devices, nil, n)
			for i, s := range shards[:len(shards)-1] {
				require.Equal(t, n*(i+1)/w, s.Stop, "n=%d w=%d shard %d", n, w, i)
			}
		}
	}
}

// §4.3 examples and test_the_lane_windows_partition_the_caller_s_window.
func TestLaneShardExamples(t *testing.T) {
	two := []int{0, 1}
	require.Equal(t, []shard.Shard{sh(0, 0, 2048), sh(1, 2048, 4096)}, shard.LaneShards(two, nil, 0, 4096))
	require.Equal(t, []shard.Shard{sh(1, 0, 16)}, shard.LaneShards(two, nil, 0, 16), "narrower than a warp: the last device")
	require.Equal(t, []shard.Shard{sh(0, 0, 32), sh(1, 32, 64)}, shard.LaneShards(two, nil, 0, 64))
	// [3,1] over 100: raw 75 rounds to 64 (nearest warp, halves up).
	require.Equal(t, []shard.Shard{sh(0, 0, 64), sh(1, 64, 100)}, shard.LaneShards(two, []float64{3, 1}, 0, 100))
	// 80 = 2.5 warps rounds up to 96.
	require.Equal(t, []shard.Shard{sh(0, 0, 96), sh(1, 96, 160)}, shard.LaneShards(two, nil, 0, 160))
	// Alignment is relative to begin.
	require.Equal(t, []shard.Shard{sh(0, 8193, 8193+2048), sh(1, 8193+2048, 8193+4096)}, shard.LaneShards(two, nil, 8193, 4096))
	require.Equal(t, []shard.Shard{sh(0, 0, 64)}, shard.LaneShards(two, []float64{1, 0}, 0, 64))
	require.Empty(t, shard.LaneShards(two, nil, 5, 0))
}

func TestLaneShardsPartition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 31, 32, 100, 1024, 8192, 100000, 1 << 20} {
		for _, w := range []int{1, 2, 3, 4, 8} {
			devices := make([]int, w)
			weights := make([]float64, w)
			for i := range w {
				devices[i] = i
				weights[i] = r.Float64()
			}
			begin := r.IntN(1000)
			for _, ws := range [][]float64{nil, weights} {
				shards := shard.LaneShards(devices, ws, begin, n)
				next := begin
				for i, s := range shards {
					require.Equal(t, next, s.Start)
					require.Greater(t, s.Stop, s.Start)
					if i < len(shards)-1 {
						require.Zero(t, (s.Stop-begin)%shard.WarpLanes, "interior boundary off the warp grid")
					}
					next = s.Stop
				}
				require.Equal(t, begin+n, next)
			}
		}
	}
}

// §5.2: the floor scales with the transfer width and never drops below the
// baseline.
func TestFloor(t *testing.T) {
	require.Equal(t, 17, shard.Floor(17, 100))
	require.Equal(t, 17, shard.Floor(17, 28), "narrow rows never lower the floor")
	require.Equal(t, 10, shard.Floor(10, 1))
	require.Equal(t, 104858, shard.Floor(10, 1<<20))
	require.Equal(t, 262144, shard.Floor(262144, shard.IntersectOp(1).TransferRowBytes))
	require.Equal(t, 293602, shard.Floor(262144, shard.TraceReflectionsOp(4).TransferRowBytes))
	require.Equal(t, 395838, shard.Floor(262144, 151), "nearest_edges:3")
}

// §13 rows 36-38 and test_a_caller_lane_window_is_sharded_inside_itself's
// refusals.
func TestResolveLaneWindow(t *testing.T) {
	b, n, err := shard.ResolveLaneWindow(8192, 0, -1)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 8192}, [2]int{b, n})
	b, n, err = shard.ResolveLaneWindow(8192, 4096, -1)
	require.NoError(t, err)
	require.Equal(t, [2]int{4096, 4096}, [2]int{b, n})
	b, n, err = shard.ResolveLaneWindow(8192, 8192, 0)
	require.NoError(t, err)
	require.Equal(t, [2]int{8192, 0}, [2]int{b, n})
	for _, c := range []struct {
		offset, count int
		msg           string
	}{
		{-1, 8, "lane_offset must be non-negative"},
		{8193, -1, "lane_offset must not exceed the total sample count"},
		{1, 8192, "lane_offset + lane_count must not exceed the total sample count"},
	} {
		_, _, err := shard.ResolveLaneWindow(8192, c.offset, c.count)
		require.ErrorIs(t, err, shard.ErrLaneWindow)
		var le *shard.LaneWindowError
		require.ErrorAs(t, err, &le)
		require.Contains(t, err.Error(), c.msg)
	}
}
