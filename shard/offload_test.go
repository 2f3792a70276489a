package shard_test

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// collector is an offload hook that keeps every chunk it is handed.
type collector struct {
	mu     sync.Mutex
	starts []int
	sizes  []int
	chunks []any
}

func (c *collector) hook(start int, chunk any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.starts = append(c.starts, start)
	c.chunks = append(c.chunks, chunk)
	switch v := chunk.(type) {
	case *geom.Hits:
		c.sizes = append(c.sizes, v.Len())
	case *geom.Reflections:
		c.sizes = append(c.sizes, v.Len())
	case []bool:
		c.sizes = append(c.sizes, len(v))
	}
	return nil
}

// hits reassembles the streamed intersection chunks in row order.
func (c *collector) hits(t *testing.T, total int, flags geom.Flags) *geom.Hits {
	t.Helper()
	var parts []shard.Part[*geom.Hits]
	for i, s := range c.starts {
		h := c.chunks[i].(*geom.Hits)
		parts = append(parts, shard.Part[*geom.Hits]{Start: s, Stop: s + h.Len(), Record: h})
	}
	slices.SortFunc(parts, func(a, b shard.Part[*geom.Hits]) int { return cmp.Compare(a.Start, b.Start) })
	h, err := (&shard.Intersect{Flags: flags}).Assemble(total, parts)
	require.NoError(t, err)
	return h
}

// test_the_offload_hook_sees_every_chunk_once_and_in_order.
func TestOffloadSeesEveryChunkOnceInOrder(t *testing.T) {
	var c collector
	l, _ := newLayer(t, 1, []int{0}, shard.Options{ChunkRays: 7, Offload: c.hook})
	b := newBatch(33, 11)
	got, err := shard.RunRows(context.Background(), l, intersectTask(b, geom.FlagsAll))
	require.NoError(t, err)
	require.Nil(t, got, "a streamed operation returns nothing")
	require.Equal(t, []int{0, 7, 14, 21, 28}, c.starts)
	require.Equal(t, []int{7, 7, 7, 7, 5}, c.sizes)
	want, err := reference(t).Intersect(b.o, b.d, b.tmax, b.active, geom.FlagsAll)
	require.NoError(t, err)
	requireHitsBitwise(t, want, c.hits(t, 33, geom.FlagsAll))
}

// test_the_offload_hook_streams_each_device_in_row_order (and the same
// stream over 4 and 8 devices): ascending rows per device, interleaved
// across devices, every row exactly once.
func TestOffloadStreamsEachDeviceInRowOrder(t *testing.T) {
	s := reference(t)
	for _, cfg := range []struct {
		devices []int
		rows    int
		want    []int
	}{
		{[]int{0, 1}, 33, []int{0, 16, 7, 23, 14, 30}},
		{[]int{0, 1, 2, 3}, 33, []int{0, 8, 16, 24, 7, 15, 23, 31}},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, 60, nil},
	} {
		var c collector
		l, _ := newLayer(t, len(cfg.devices), cfg.devices, shard.Options{ChunkRays: 7, Offload: c.hook})
		b := newBatch(cfg.rows, 12)
		got, err := shard.RunRows(context.Background(), l, intersectTask(b, geom.FlagsAll))
		require.NoError(t, err)
		require.Nil(t, got)
		if cfg.want != nil {
			require.Equal(t, cfg.want, c.starts)
		}
		seen := make([]int, cfg.rows)
		last := map[int]int{}
		for i, start := range c.starts {
			for r := start; r < start+c.sizes[i]; r++ {
				seen[r]++
			}
			shards := l.LastDispatch().Shards
			dev := -1
			for _, sh := range shards {
				if start >= sh.Start && start < sh.Stop {
					dev = sh.Device
				}
			}
			if prev, ok := last[dev]; ok {
				require.Greater(t, start, prev, "rows ascend within device %d", dev)
			}
			last[dev] = start
		}
		for r, n := range seen {
			require.Equal(t, 1, n, "row %d streamed %d times", r, n)
		}
		want, err := s.Intersect(b.o, b.d, b.tmax, b.active, geom.FlagsAll)
		require.NoError(t, err)
		requireHitsBitwise(t, want, c.hits(t, cfg.rows, geom.FlagsAll))
	}
}

// test_every_streamed_operation_returns_none and
// test_a_streamed_chunk_carries_the_whole_result_type.
func TestEveryStreamedOperationReturnsNothing(t *testing.T) {
	var c collector
	l, _ := newLayer(t, 1, []int{0}, shard.Options{ChunkRays: 11, Offload: c.hook})
	b := newBatch(33, 13)
	ctx := context.Background()
	h, err := shard.RunRows(ctx, l, intersectTask(b, geom.FlagsNone))
	require.NoError(t, err)
	require.Nil(t, h)
	r, err := shard.RunRows(ctx, l, reflectTask(b, 3))
	require.NoError(t, err)
	require.Nil(t, r)
	v, err := shard.RunRows(ctx, l, visibleTask(b))
	require.NoError(t, err)
	require.Nil(t, v)
	require.Len(t, c.starts, 9)
	// The reflection chunks carry every field of the record.
	want, err := reference(t).TraceReflections(b.o, b.d, b.tmax, b.active, 3)
	require.NoError(t, err)
	var parts []shard.Part[*geom.Reflections]
	for i := 3; i < 6; i++ {
		rec := c.chunks[i].(*geom.Reflections)
		require.Len(t, rec.ImageSources, 3*3*rec.Len())
		parts = append(parts, shard.Part[*geom.Reflections]{Start: c.starts[i], Stop: c.starts[i] + rec.Len(), Record: rec})
	}
	got, err := reflectTask(b, 3).Assemble(33, parts)
	require.NoError(t, err)
	requireReflectionsBitwise(t, want, got)
	// The empty batch never reaches the hook.
	c = collector{}
	h, err = shard.RunRows(ctx, l, intersectTask(newBatch(0, 1), geom.FlagsAll))
	require.NoError(t, err)
	require.Nil(t, h)
	require.Empty(t, c.starts)
}

// Offload under a budget reserves no returned output (test_streaming_peak_increment_respects_the_budget's
// plan), and a typed hook sees its record type.
func TestOffloadUnderABudget(t *testing.T) {
	rows := 0
	hook := shard.OffloadAs(func(_ int, h *geom.Hits) error { rows += h.Len(); return nil })
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MemoryBudgetBytes: 3 * 100 * 50, Offload: hook})
	_, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(1000, 14), geom.FlagsAll))
	require.NoError(t, err)
	require.Equal(t, 1000, rows)
	p := l.LastChunkPlan()
	require.Equal(t, 50, p.ChunkRays)
	require.Zero(t, p.FixedOutputBytes)
	require.Equal(t, 20, p.ChunkCount)
	require.Equal(t, 10, c.Stats(1).Launches)
	// A hook typed for another record refuses the chunk and stops the call.
	_, err = shard.RunRows(context.Background(), l, visibleTask(newBatch(10, 1)))
	require.ErrorContains(t, err, "offload hook expects *geom.Hits, got []bool")
	require.NoError(t, l.Poisoned())
}
