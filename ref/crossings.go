package ref

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// Crossings is the crossings query (see geom.Crossings): for every segment
// start→end under Visible's segment rule, the k hits of least (t, global
// prim id) in ascending order, the total hit count and whether it exceeds
// k. Every triangle whose watertight test accepts a t in
// [geom.MultipathTMin, tmax] is a hit — the acceptance of Visible, so a
// segment is visible exactly when its count is 0. Segments carry the full
// ray mask geom.DefaultMask: a face counts only while the visibility mask
// of its mesh is not 0 (ReloadMasks). Inactive, non-finite and degenerate
// rows hold the miss record with count 0.
//
// A BVH scene walks every node the segment's padded interval enters (the
// culling of closest hit, never narrowed by a hit), a brute-force scene
// tests every triangle; both give identical records. Errors: a
// *LengthError (ErrLength) for mismatched slices, an *ArgumentError
// (ErrInvalidArgument) for k outside [1, geom.MaxCrossingsK], an
// *AllocationError (geom.ErrTooLarge) for a record that cannot fit.
func (s *Scene) Crossings(start, end []float32, active []bool, k int) (*geom.Crossings, error) {
	return s.CrossingsContext(context.Background(), start, end, active, k)
}

// CrossingsContext is Crossings honouring ctx between blocks of rows; once
// ctx is done it returns no record and an error wrapping ctx.Err().
func (s *Scene) CrossingsContext(ctx context.Context, start, end []float32, active []bool, k int) (*geom.Crossings, error) {
	n, err := geom.CheckCrossings(start, end, active, k, geom.HostMemoryLimit())
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: crossings cancelled: %w", err)
	}
	c := geom.NewCrossings(n, k)
	if n == 0 {
		return c, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "crossings", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if len(active) > 0 && !active[i] {
				continue
			}
			origin, dir, tmax, ok := geom.SegmentRay(row3(start, i), row3(end, i))
			if !ok {
				continue
			}
			kept := crossingRow{t: c.T[i*k : i*k+k], prim: c.Prim[i*k : i*k+k]}
			s.crossRow(origin, dir, tmax, &kept)
			c.Count[i] = kept.count
			for j := range min(int(kept.count), k) {
				c.Shape[i*k+j] = s.tables.FaceShape[kept.prim[j]]
			}
		}
	}); err != nil {
		return nil, err
	}
	c.SetOverflow()
	return c, nil
}

// crossingRow is the kept hits of one row, sorted by (t, prim), with the
// total count.
type crossingRow struct {
	t     []float32
	prim  []int32
	count int32
}

// add counts a hit and keeps it when it is among the k least.
func (r *crossingRow) add(t float32, p int32) {
	r.count++
	k := len(r.t)
	n := min(int(r.count)-1, k) // slots in use before this hit
	if n == k && !geom.CrossingLess(t, p, r.t[k-1], r.prim[k-1]) {
		return
	}
	j := min(n, k-1)
	for j > 0 && geom.CrossingLess(t, p, r.t[j-1], r.prim[j-1]) {
		r.t[j], r.prim[j] = r.t[j-1], r.prim[j-1]
		j--
	}
	r.t[j], r.prim[j] = t, p
}

// crossRow finds every hit of o + t·d with t ∈ [MultipathTMin, tmax].
func (s *Scene) crossRow(o, d [3]float32, tmax float32, kept *crossingRow) {
	tmin := geom.MultipathTMin
	if s.bvh == nil {
		for p := range s.tris {
			s.crossTri(o, d, tmin, tmax, int32(p), kept)
		}
		return
	}
	r := newRay64(o, d)
	lo, hi := widenLow(tmin), widenHigh(tmax)
	var buf [geom.BVHStackDepth]int32
	stack := append(buf[:0], 0)
	for len(stack) > 0 {
		ni := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := &s.bvh.nodes[ni]
		if _, ok := r.enter(n, lo, hi); !ok {
			continue
		}
		if n.right >= 0 {
			stack = append(stack, n.right, ni+1)
			continue
		}
		for _, p := range s.bvh.prims[n.start : n.start+n.count] {
			s.crossTri(o, d, tmin, tmax, p, kept)
		}
	}
}

// crossTri counts face p when its mesh mask is not 0 and the watertight
// test accepts it.
func (s *Scene) crossTri(o, d [3]float32, tmin, tmax float32, p int32, kept *crossingRow) {
	if !s.visibleTo(p, geom.DefaultMask) {
		return
	}
	tr := &s.tris[p]
	if t, _, _, ok := geom.Watertight(o, d, tr[0], tr[1], tr[2], tmin, tmax); ok {
		kept.add(t, p)
	}
}
