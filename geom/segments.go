package geom

import (
	"fmt"
	"math"
)

// SegmentBatch is a visibility variant expanded into segments (spec §4.2):
// every row of the variant owns PerRow consecutive segments start→end (3
// values each), an active flag per segment (false: the segment is not
// queried and its blocker is −1) and, when K > 0, K ignored prim ids per
// segment (−1 pads). RowOK is false for a row that is inactive or has a
// non-finite input; such a row's answer is the variant's "no" record. The
// closest-blocker query runs over all Rows·PerRow segments (or over the
// segments of a range of rows: rows [lo, hi) own segments [lo·PerRow,
// hi·PerRow)), and the variant's Finish turns blockers back into rows.
type SegmentBatch struct {
	Rows, PerRow int
	Start, End   []float32
	Active       []bool
	Ignore       []int32
	K            int
	RowOK        []bool
}

// Segments returns the segment count Rows·PerRow.
func (b *SegmentBatch) Segments() int { return b.Rows * b.PerRow }

// Query runs q over the segments of rows [lo, hi).
func (b *SegmentBatch) Query(q SegmentBlockers, lo, hi int) ([]int32, error) {
	s0, s1 := lo*b.PerRow, hi*b.PerRow
	var ign []int32
	if b.K > 0 {
		ign = b.Ignore[s0*b.K : s1*b.K]
	}
	blk, err := q(b.Start[3*s0:3*s1], b.End[3*s0:3*s1], b.Active[s0:s1], ign, b.K)
	if err != nil {
		return nil, err
	}
	if len(blk) != s1-s0 {
		return nil, fmt.Errorf("geom: segment query returned %d blockers for %d segments", len(blk), s1-s0)
	}
	return blk, nil
}

func newSegmentBatch(rows, per, k int) *SegmentBatch {
	m := rows * per
	b := &SegmentBatch{Rows: rows, PerRow: per, K: k, Start: make([]float32, 3*m), End: make([]float32, 3*m),
		Active: make([]bool, m), RowOK: make([]bool, rows)}
	if k > 0 {
		b.Ignore = make([]int32, m*k)
	}
	return b
}

// PairVisibility is the record of VisiblePair: per row, whether start→endA
// (A) and start→endB (B) are unobstructed.
type PairVisibility struct {
	A, B []bool
}

// Len is the number of rows.
func (p *PairVisibility) Len() int { return len(p.A) }

// PairSegments validates the inputs of visible_pair and expands them: two
// segments per row (start→endA, start→endB), the row's ignore ids on both.
func PairSegments(start, endA, endB []float32, ignore []int32, active []bool) (*SegmentBatch, error) {
	n, err := CheckSegments(start, endA, active)
	if err != nil {
		return nil, err
	}
	if err := checkLen("end_b", len(endB), n, 3, false); err != nil {
		return nil, err
	}
	k, err := ignoreWidth(ignore, n, 1)
	if err != nil {
		return nil, err
	}
	b := newSegmentBatch(n, 2, k)
	for i := range n {
		ok := on(active, i) && finiteRows(i, start, endA, endB)
		b.RowOK[i] = ok
		for j, end := range [2][]float32{endA, endB} {
			s := 2*i + j
			copy(b.Start[3*s:3*s+3], start[3*i:3*i+3])
			copy(b.End[3*s:3*s+3], end[3*i:3*i+3])
			b.Active[s] = ok
			if k > 0 {
				copy(b.Ignore[s*k:s*k+k], ignore[i*k:i*k+k])
			}
		}
	}
	return b, nil
}

// PairFinish turns the blockers of rows [lo, hi) of a PairSegments batch
// (two per row) into their PairVisibility rows.
func PairFinish(b *SegmentBatch, lo, hi int, blk []int32) (*PairVisibility, error) {
	if err := b.checkBlockers(lo, hi, blk); err != nil {
		return nil, err
	}
	n := hi - lo
	r := &PairVisibility{A: make([]bool, n), B: make([]bool, n)}
	for i := range n {
		s := 2 * (lo + i)
		r.A[i] = b.Active[s] && blk[2*i] < 0
		r.B[i] = b.Active[s+1] && blk[2*i+1] < 0
	}
	return r, nil
}

// EdgeSegments validates the inputs of visible_edge and expands them: one
// segment per sample fraction, Source → Position + (TMin + f·max(TMax −
// TMin, 0))·Direction (float32 arithmetic, each operation rounded).
func EdgeSegments(e EdgeSamples) (*SegmentBatch, error) {
	n, err := CheckSegments(e.Source, e.Position, e.Active)
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		f   string
		got int
		per int
	}{{"edge_direction", len(e.Direction), 3}, {"edge_t_min", len(e.TMin), 1}, {"edge_t_max", len(e.TMax), 1}} {
		if err := checkLen(c.f, c.got, n, c.per, false); err != nil {
			return nil, err
		}
	}
	fr := e.Fractions
	if fr == nil {
		fr = DefaultEdgeFractions
	}
	if len(fr) == 0 || len(fr) > MaxEdgeFractions {
		return nil, &ArgumentError{Field: "sample_fractions", Reason: fmt.Sprintf("%d fractions (1 to %d)", len(fr), MaxEdgeFractions)}
	}
	for _, f := range fr {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, &ArgumentError{Field: "sample_fractions", Reason: "non-finite fraction"}
		}
	}
	b := newSegmentBatch(n, len(fr), 0)
	for i := range n {
		t0, t1 := e.TMin[i], e.TMax[i]
		ok := on(e.Active, i) && finiteRows(i, e.Source, e.Position, e.Direction) &&
			!math.IsNaN(float64(t0)) && !math.IsInf(float64(t0), 0) && !math.IsNaN(float64(t1)) && !math.IsInf(float64(t1), 0)
		b.RowOK[i] = ok
		span := max(t1-t0, 0)
		for j, f := range fr {
			s := i*len(fr) + j
			b.Active[s] = ok
			t := t0 + float32(f*span)
			for c := range 3 {
				b.Start[3*s+c] = e.Source[3*i+c]
				b.End[3*s+c] = e.Position[3*i+c] + float32(t*e.Direction[3*i+c])
			}
		}
	}
	return b, nil
}

// EdgeFinish turns the blockers of rows [lo, hi) of an EdgeSegments batch
// into their visible_edge rows: true when any sample is visible.
func EdgeFinish(b *SegmentBatch, lo, hi int, blk []int32) ([]bool, error) {
	if err := b.checkBlockers(lo, hi, blk); err != nil {
		return nil, err
	}
	out := make([]bool, hi-lo)
	for j, x := range blk {
		if b.Active[lo*b.PerRow+j] && x < 0 {
			out[j/b.PerRow] = true
		}
	}
	return out, nil
}

// ChainSegments validates the inputs of visible_chain (P points per row,
// P ≥ 2) and expands them: P − 1 segment slots per row, point j → point
// j+1; slots past the row's walked length min(length[i], P−1) and every
// slot of an inactive or non-finite row are inactive.
func ChainSegments(points []float32, p int, length []int32, ignore []int32, active []bool) (*SegmentBatch, error) {
	if p < 2 {
		return nil, &ArgumentError{Field: "points", Reason: fmt.Sprintf("%d points per chain (at least 2)", p)}
	}
	if len(points)%(3*p) != 0 {
		return nil, &LengthError{Field: "points", Want: -1, Got: len(points), PerRow: 3 * p}
	}
	n := len(points) / (3 * p)
	if err := checkLen("chain_length", len(length), n, 1, false); err != nil {
		return nil, err
	}
	if err := checkLen("active", len(active), n, 1, true); err != nil {
		return nil, err
	}
	k, err := ignoreWidth(ignore, n, p-1)
	if err != nil {
		return nil, err
	}
	b := newSegmentBatch(n, p-1, k)
	for i := range n {
		segs := int(min(max(length[i], 0), int32(p-1)))
		row := points[3*p*i : 3*p*(i+1)]
		ok := on(active, i)
		for j := 0; ok && j <= segs && segs > 0; j++ {
			ok = finiteRows(j, row)
		}
		b.RowOK[i] = ok
		for j := range p - 1 {
			s := i*(p-1) + j
			copy(b.Start[3*s:3*s+3], row[3*j:3*j+3])
			copy(b.End[3*s:3*s+3], row[3*j+3:3*j+6])
			b.Active[s] = ok && j < segs
			if k > 0 {
				copy(b.Ignore[s*k:s*k+k], ignore[s*k:s*k+k])
			}
		}
	}
	return b, nil
}

// ChainFinish turns the blockers of rows [lo, hi) of a ChainSegments batch
// into their ChainVisibility rows: the first blocked walked segment and its
// blocker, or all visible.
func ChainFinish(b *SegmentBatch, lo, hi int, blk []int32) (*ChainVisibility, error) {
	if err := b.checkBlockers(lo, hi, blk); err != nil {
		return nil, err
	}
	n := hi - lo
	res := &ChainVisibility{AllVisible: make([]bool, n), FirstBlockedSegment: make([]int32, n), FirstBlockedPrim: make([]int32, n)}
	for i := range n {
		res.AllVisible[i] = b.RowOK[lo+i]
		res.FirstBlockedSegment[i], res.FirstBlockedPrim[i] = InvalidID, InvalidID
		for j := range b.PerRow {
			s := (lo+i)*b.PerRow + j
			if !b.Active[s] {
				break
			}
			if x := blk[i*b.PerRow+j]; x >= 0 {
				res.AllVisible[i] = false
				res.FirstBlockedSegment[i], res.FirstBlockedPrim[i] = int32(j), x
				break
			}
		}
	}
	return res, nil
}

// Len is the number of rows.
func (c *ChainVisibility) Len() int { return len(c.AllVisible) }

func (b *SegmentBatch) checkBlockers(lo, hi int, blk []int32) error {
	if lo < 0 || hi < lo || hi > b.Rows {
		return fmt.Errorf("geom: rows [%d,%d) of a batch of %d", lo, hi, b.Rows)
	}
	if len(blk) != (hi-lo)*b.PerRow {
		return fmt.Errorf("geom: %d blockers for rows [%d,%d) of %d segments each", len(blk), lo, hi, b.PerRow)
	}
	return nil
}
