package replica

import (
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// The visibility variants (shard.SegmentTask: visible_pair, visible_edge,
// visible_chain) on a CUDA replica. Their batch is already expanded into
// segments, PerRow consecutive ones per row, so the rows [lo, hi) of a
// chunk are segments [lo·PerRow, hi·PerRow) and every input column is a
// row column PerRow times as wide as one segment's: the starts and ends,
// the segment active flags and, with K > 0, the K ignored prim ids of every
// segment. The launch runs the closest-blocker query (accel
// BVH.SegmentBlockers, persistent on the launch stream's counter) and
// writes one blocker id per segment; Result downloads them and hands them
// to the task's FinishRows, whose record is the chunk's.

func segmentJob(t shard.SegmentTask) (*job, error) {
	b := t.SegmentBatch()
	if b == nil {
		return nil, fmt.Errorf("replica: %s without a segment batch", t.Op().Key)
	}
	per, k := b.PerRow, b.K
	if per < 1 || k < 0 {
		return nil, fmt.Errorf("replica: %s: %d segments per row, %d ignored ids per segment", t.Op().Key, per, k)
	}
	in := layout{f32: []spec{col("segments.start", 3*per), col("segments.end", 3*per)},
		i32: []spec{col("segments.ignore", k*per)}, u8: []spec{col("segments.active", per*present(b.Active))}}
	return &job{key: t.Op().Key, in: in, vertices: -1,
		host: hostIn{f32: [][]float32{b.Start, b.End}, i32: [][]int32{b.Ignore}, u8: [][]bool{b.Active}},
		out:  layout{i32: []spec{col("blockers", per)}},
		run: func(kn kernels, s *launch.Stream, in, out columns, n int) error {
			seg := accel.Segments{Start: in.f32[0], End: in.f32[1], Active: in.u8[0], N: n * per, Counter: kn.counter}
			return kn.bvh.SegmentBlockers(s, seg, in.i32[0], k, out.i32[0])
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			blk := make([]int32, (hi-lo)*per)
			if err := download(s, out.i32, [][]int32{blk}); err != nil {
				return nil, err
			}
			return t.FinishRows(lo, hi, blk)
		}}, nil
}
