package geom

import (
	"fmt"
	"math"
)

// SegmentBlockers answers the segment query behind the visibility variants
// of spec §4.2: for every segment start→end (3 values per row), the global
// prim id of its closest blocker under the segment rule of spec §4.1 that
// is not in the segment's ignore row (k ids per segment, −1 pads; ignore
// empty: none), or −1 when nothing blocks it. Inactive segments give −1.
type SegmentBlockers func(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error)

// DefaultEdgeFractions are the sample fractions of VisibleEdge.
var DefaultEdgeFractions = []float32{0, 0.25, 0.5, 0.75, 1}

// MaxEdgeFractions is the most sample fractions VisibleEdge takes.
const MaxEdgeFractions = 16

// ignoreWidth returns the ignore row length K of ignore over rows rows of
// per segments each (0 without ignore).
func ignoreWidth(ignore []int32, rows, per int) (int, error) {
	if len(ignore) == 0 {
		return 0, nil
	}
	if rows*per == 0 || len(ignore)%(rows*per) != 0 {
		return 0, &LengthError{Field: "ignore_prim_ids", Want: rows * per, Got: len(ignore), PerRow: per}
	}
	return len(ignore) / (rows * per), nil
}

func finiteRows(i int, vs ...[]float32) bool {
	for _, v := range vs {
		if !IsFinite3([3]float32{v[3*i], v[3*i+1], v[3*i+2]}) {
			return false
		}
	}
	return true
}

func on(active []bool, i int) bool { return len(active) == 0 || active[i] }

// VisiblePair is visible_pair (spec §4.2): per row, whether start→endA and
// start→endB are unobstructed, hits on the row's ignored prims skipped
// (ignore holds K ids per row, −1 pads, or is empty). Inactive rows and
// rows with a non-finite coordinate are false for both: unlike visible,
// where such a row is a miss and therefore visible (see "Non-finite
// rows" in the package documentation).
func VisiblePair(start, endA, endB []float32, ignore []int32, active []bool, q SegmentBlockers) (a, b []bool, err error) {
	n, err := CheckSegments(start, endA, active)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLen("end_b", len(endB), n, 3, false); err != nil {
		return nil, nil, err
	}
	k, err := ignoreWidth(ignore, n, 1)
	if err != nil {
		return nil, nil, err
	}
	ss, se := make([]float32, 6*n), make([]float32, 6*n)
	act := make([]bool, 2*n)
	var ign []int32
	if k > 0 {
		ign = make([]int32, 2*n*k)
	}
	for i := range n {
		ok := on(active, i) && finiteRows(i, start, endA, endB)
		for j, end := range [2][]float32{endA, endB} {
			s := 2*i + j
			copy(ss[3*s:3*s+3], start[3*i:3*i+3])
			copy(se[3*s:3*s+3], end[3*i:3*i+3])
			act[s] = ok
			if k > 0 {
				copy(ign[s*k:s*k+k], ignore[i*k:i*k+k])
			}
		}
	}
	blk, err := q(ss, se, act, ign, k)
	if err != nil {
		return nil, nil, err
	}
	a, b = make([]bool, n), make([]bool, n)
	for i := range n {
		a[i] = act[2*i] && blk[2*i] < 0
		b[i] = act[2*i+1] && blk[2*i+1] < 0
	}
	return a, b, nil
}

// EdgeSamples is the input of VisibleEdge: per row a source point and an
// edge (3 values per row for Source, Position and Direction; one for TMin
// and TMax). Direction need not be normalized.
type EdgeSamples struct {
	Source, Position, Direction []float32
	TMin, TMax                  []float32
	// Fractions are the sample positions along the edge (nil: the
	// default five, DefaultEdgeFractions); at most 16, all finite.
	Fractions []float32
	Active    []bool
}

// VisibleEdge is visible_edge (spec §4.2): per row, whether any sample
// p = Position + (TMin + f·max(TMax − TMin, 0))·Direction, f in Fractions,
// is visible from Source (float32 arithmetic, each operation rounded).
// Inactive rows and rows with a non-finite input are false (inactive, not
// a miss; see "Non-finite rows" in the package documentation).
func VisibleEdge(e EdgeSamples, q SegmentBlockers) ([]bool, error) {
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
	m := n * len(fr)
	ss, se, act := make([]float32, 3*m), make([]float32, 3*m), make([]bool, m)
	for i := range n {
		t0, t1 := e.TMin[i], e.TMax[i]
		ok := on(e.Active, i) && finiteRows(i, e.Source, e.Position, e.Direction) &&
			!math.IsNaN(float64(t0)) && !math.IsInf(float64(t0), 0) && !math.IsNaN(float64(t1)) && !math.IsInf(float64(t1), 0)
		span := max(t1-t0, 0)
		for j, f := range fr {
			s := i*len(fr) + j
			act[s] = ok
			t := t0 + float32(f*span)
			for c := range 3 {
				ss[3*s+c] = e.Source[3*i+c]
				se[3*s+c] = e.Position[3*i+c] + float32(t*e.Direction[3*i+c])
			}
		}
	}
	blk, err := q(ss, se, act, nil, 0)
	if err != nil {
		return nil, err
	}
	out := make([]bool, n)
	for s, b := range blk {
		if act[s] && b < 0 {
			out[s/len(fr)] = true
		}
	}
	return out, nil
}

// ChainVisibility is the record of VisibleChain: per row whether every
// segment is visible, and otherwise the first blocked segment and its
// closest non-ignored blocker (both −1 when all are visible or the row is
// inactive).
type ChainVisibility struct {
	AllVisible          []bool
	FirstBlockedSegment []int32
	FirstBlockedPrim    []int32
}

// VisibleChain is visible_chain (spec §4.2): points holds N rows of P
// points (3·N·P values, P ≥ 2); row i walks segments 0 … min(length[i],
// P−1)−1 (point j to point j+1) and stops at the first blocked one. ignore
// holds K ids per segment slot (N·(P−1)·K, −1 pads) or is empty. Inactive
// rows and rows with a non-finite point on a walked segment give (false,
// −1, −1) (inactive, not a miss; see "Non-finite rows" in the package
// documentation); a row with no segment is all visible.
func VisibleChain(points []float32, p int, length []int32, ignore []int32, active []bool, q SegmentBlockers) (*ChainVisibility, error) {
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
	res := &ChainVisibility{AllVisible: make([]bool, n), FirstBlockedSegment: make([]int32, n), FirstBlockedPrim: make([]int32, n)}
	var ss, se []float32
	var ign []int32
	var owner []int32 // row of each segment
	var act []bool
	for i := range n {
		res.FirstBlockedSegment[i], res.FirstBlockedPrim[i] = InvalidID, InvalidID
		segs := int(min(max(length[i], 0), int32(p-1)))
		row := points[3*p*i : 3*p*(i+1)]
		ok := on(active, i)
		for j := 0; ok && j <= segs && segs > 0; j++ {
			ok = finiteRows(j, row)
		}
		res.AllVisible[i] = ok
		for j := 0; ok && j < segs; j++ {
			ss = append(ss, row[3*j:3*j+3]...)
			se = append(se, row[3*j+3:3*j+6]...)
			act = append(act, true)
			owner = append(owner, int32(i))
			if k > 0 {
				base := (i*(p-1) + j) * k
				ign = append(ign, ignore[base:base+k]...)
			}
		}
	}
	if len(act) == 0 {
		return res, nil
	}
	blk, err := q(ss, se, act, ign, k)
	if err != nil {
		return nil, err
	}
	seg := int32(0)
	for s, b := range blk {
		i := owner[s]
		if s > 0 && owner[s-1] == i {
			seg++
		} else {
			seg = 0
		}
		if b >= 0 && res.AllVisible[i] {
			res.AllVisible[i] = false
			res.FirstBlockedSegment[i], res.FirstBlockedPrim[i] = seg, b
		}
	}
	return res, nil
}
