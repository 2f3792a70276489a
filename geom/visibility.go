package geom

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
	batch, err := PairSegments(start, endA, endB, ignore, active)
	if err != nil {
		return nil, nil, err
	}
	blk, err := batch.Query(q, 0, batch.Rows)
	if err != nil {
		return nil, nil, err
	}
	r, err := PairFinish(batch, 0, batch.Rows, blk)
	if err != nil {
		return nil, nil, err
	}
	return r.A, r.B, nil
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
	batch, err := EdgeSegments(e)
	if err != nil {
		return nil, err
	}
	blk, err := batch.Query(q, 0, batch.Rows)
	if err != nil {
		return nil, err
	}
	return EdgeFinish(batch, 0, batch.Rows, blk)
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
	batch, err := ChainSegments(points, p, length, ignore, active)
	if err != nil {
		return nil, err
	}
	blk, err := batch.Query(q, 0, batch.Rows)
	if err != nil {
		return nil, err
	}
	return ChainFinish(batch, 0, batch.Rows, blk)
}
