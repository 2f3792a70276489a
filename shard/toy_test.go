package shard_test

import (
	"slices"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// toyGrid is a stand-in grid_reduce operation (the RF accumulations plug
// into the same machinery later): lane l shoots one ray up through the
// fixture from a point that depends only on (seed, l), and a hit adds to
// the grid cell of the hit face. Exact toys add 1 per hit, so every merge
// order gives the same bits; the others add t, so only the merge order
// fixes the last bits.
type toyGrid struct {
	total, offset, count int
	cells                int
	seed                 uint64
	exact                bool
	zeroOffsetOnly       bool
}

type toyResult struct {
	Power   []float32
	Hits    []int32
	Lanes   int64
	LaneSum int64 // Σ of the lane indices run: catches a lane run twice or skipped
}

func toyOp() shard.Op { return (&toyGrid{cells: 16}).Op() }

func (t *toyGrid) Op() shard.Op {
	g := int64(t.cells*8 + 16)
	return shard.Op{Key: "toy_grid", Class: shard.GridReduce, RowBytes: 21, FixedBytes: 3 * g,
		WarpChunks: true, ZeroOffsetOnly: t.zeroOffsetOnly}
}

func (t *toyGrid) Lanes() (int, int, int, error) { return t.total, t.offset, t.count, nil }

// Input: a grid_reduce task's whole inputs (here only its parameters).
func (t *toyGrid) Input(_, _ int, _ bool) (any, int) { c := *t; return &c, 16 }

func (t *toyGrid) Run(s *ref.Scene, in any, lo, hi int) (any, error) {
	p := in.(*toyGrid)
	if p.zeroOffsetOnly && lo != 0 {
		return nil, &geom.ArgumentError{Field: "lane_offset", Reason: "requires the OptiX trace backend"}
	}
	r := &toyResult{Power: make([]float32, p.cells), Hits: make([]int32, p.cells)}
	for l := lo; l < hi; l++ {
		x := splitmix(p.seed ^ uint64(l))
		o := [3]float32{float32(x&0xffff)/65536*1.8 - 0.9, float32(x>>16&0xffff)/65536*1.8 - 0.9, -1}
		d := [3]float32{float32(x>>32&0xff)/2560 - 0.05, 0, 1}
		if h, ok := s.Closest(o, d, geom.TMin, geom.DefaultTMax); ok {
			c := int(h.Prim) % p.cells
			r.Hits[c]++
			if p.exact {
				r.Power[c]++
			} else {
				r.Power[c] += h.T * 0.37
			}
		}
		r.Lanes++
		r.LaneSum += int64(l)
	}
	return r, nil
}

func (t *toyGrid) Output(out any, copied bool) (any, int) {
	r := out.(*toyResult)
	if copied {
		r = &toyResult{Power: slices.Clone(r.Power), Hits: slices.Clone(r.Hits), Lanes: r.Lanes, LaneSum: r.LaneSum}
	}
	return r, len(r.Power)*8 + 16
}

func (t *toyGrid) OutputBytes(_, _ int) int { return t.cells*8 + 16 }

func (t *toyGrid) Add(acc, part any) (any, error) {
	a, b := acc.(*toyResult), part.(*toyResult)
	for i := range a.Power {
		a.Power[i] += b.Power[i]
		a.Hits[i] += b.Hits[i]
	}
	a.Lanes += b.Lanes
	a.LaneSum += b.LaneSum
	return a, nil
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// single is the one-launch reference of a toy window on one scene.
func (t *toyGrid) single(s *ref.Scene) *toyResult {
	begin, n, err := shard.ResolveLaneWindow(t.total, t.offset, t.count)
	if err != nil {
		panic(err)
	}
	r, err := t.Run(s, t, begin, begin+n)
	if err != nil {
		panic(err)
	}
	return r.(*toyResult)
}
