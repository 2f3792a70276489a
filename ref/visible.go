package ref

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// Visible is visible(start, end) (spec §4.1): per row, whether the segment
// from start to end is unobstructed. In float32:
//
//	D = end − start;  L = sqrt((Dx² + Dy²) + Dz²)
//	L ≤ geom.MinSegmentLength                 ⇒ true (degenerate segment)
//	dir = D/L;  origin = start + geom.MultipathBias·dir
//	tmax = max(L − geom.MinSegmentLength, 0)
//	visible = no triangle hit with t ∈ [geom.MultipathTMin, tmax]
//
// Inactive rows are false. Rows with a non-finite coordinate find no hit
// and are reported visible: a miss, as for intersect (spec §0.2, §4.1).
// The visibility variants (geom.VisiblePair, VisibleEdge, VisibleChain,
// built on SegmentBlockers) treat such a row as inactive instead, hence
// false: see "Non-finite rows" in package geom. Errors: a *LengthError
// for mismatched slices; an empty batch returns an empty slice.
func (s *Scene) Visible(start, end []float32, active []bool) ([]bool, error) {
	return s.VisibleContext(context.Background(), start, end, active)
}

// VisibleContext is Visible honouring ctx: it checks ctx between blocks of
// rows and once ctx is done returns no result and an error wrapping
// ctx.Err().
func (s *Scene) VisibleContext(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	n, err := geom.CheckSegments(start, end, active)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: visible cancelled: %w", err)
	}
	out := make([]bool, n)
	if n == 0 {
		return out, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "visible", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if len(active) > 0 && !active[i] {
				continue
			}
			out[i] = s.segmentVisible(row3(start, i), row3(end, i))
		}
	}); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Scene) segmentVisible(a, b [3]float32) bool {
	origin, dir, tmax, ok := geom.SegmentRay(a, b)
	return !ok || !s.anyHit(origin, dir, geom.MultipathTMin, tmax, geom.DefaultMask)
}

// SegmentBlockers is the segment query behind the visibility variants of
// spec §4.2: for every segment start→end, the global prim id of its closest
// blocker (the hit of least t in [geom.MultipathTMin, tmax] under Visible's
// segment rule, ties to the lower prim id) that is not in the segment's
// ignore row, or −1 when nothing blocks it. Inactive, non-finite and
// degenerate segments give −1 (the variants built on it therefore report a
// non-finite row as not visible). ignore holds k ids per segment (−1 pads)
// or is empty (k is then ignored). It has the signature of
// geom.SegmentBlockers.
func (s *Scene) SegmentBlockers(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
	return s.SegmentBlockersContext(context.Background(), start, end, active, ignore, k)
}

// SegmentBlockersContext is SegmentBlockers honouring ctx between blocks of
// rows; once ctx is done it returns no result and an error wrapping
// ctx.Err().
func (s *Scene) SegmentBlockersContext(ctx context.Context, start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
	n, err := geom.CheckSegments(start, end, active)
	if err != nil {
		return nil, err
	}
	if len(ignore) > 0 && (k < 1 || len(ignore) != n*k) {
		return nil, &geom.LengthError{Field: "ignore", Want: n * max(k, 1), Got: len(ignore), PerRow: max(k, 1)}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ref: segment blockers cancelled: %w", err)
	}
	out := make([]int32, n)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "segment blockers", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = geom.InvalidID
			if len(active) > 0 && !active[i] {
				continue
			}
			origin, dir, tmax, ok := geom.SegmentRay(row3(start, i), row3(end, i))
			if !ok {
				continue
			}
			var skip []int32
			if len(ignore) > 0 {
				skip = ignore[i*k : i*k+k]
			}
			if h, hit := s.closestSkipping(origin, dir, geom.MultipathTMin, tmax, geom.DefaultMask, skip); hit {
				out[i] = h.Prim
			}
		}
	}); err != nil {
		return nil, err
	}
	return out, nil
}
