package geom

import (
	"fmt"
	"math"
)

// MaxCrossingsK is the largest k of the crossings query: the number of hits
// kept per row. The GPU kernels hold the kept hits of a row in one thread's
// registers (k ≤ 8) or local memory (k ≤ 64).
const MaxCrossingsK = 64

// CrossingSlotBytes is the size of one kept hit of a Crossings record (t 4,
// prim 4, shape 4); CrossingRowBytes is the per-row part (count 4,
// overflow 1).
const (
	CrossingSlotBytes = 12
	CrossingRowBytes  = 5
)

// Crossings is the record of the crossings query: every triangle hit along
// each segment start→end, under the segment rule of Visible (operations
// spec §4.1). For a segment with D = end − start, L = |D| > MinSegmentLength,
// dir = D/L and origin = start + MultipathBias·dir (all float32), a hit is a
// triangle whose watertight test (Watertight) accepts a t in
// [MultipathTMin, max(L − MinSegmentLength, 0)]: t is a world distance
// along the unit direction, measured from the biased origin (the hit point
// is origin + t·dir), the same t and the same acceptance as Visible.
//
// Row i holds K slots at [i·K, i·K+K): the min(Count[i], K) hits of least
// (t, global prim id), in ascending order, then miss slots (T = +Inf,
// Prim = Shape = InvalidID). Prim is the global prim id of the triangle and
// Shape its mesh (the ShapeID of Hits). Count[i] is the number of hits on
// the whole segment, including those beyond K; Overflow[i] reports
// Count[i] > K. An inactive row, a row with a non-finite coordinate and a
// degenerate segment (L ≤ MinSegmentLength) have Count 0 and only miss
// slots.
type Crossings struct {
	K        int
	T        []float32
	Prim     []int32
	Shape    []int32
	Count    []int32
	Overflow []bool
}

// NewCrossings returns a record of n rows of k slots, every row the miss
// record.
func NewCrossings(n, k int) *Crossings {
	c := &Crossings{K: k, T: make([]float32, n*k), Prim: make([]int32, n*k), Shape: make([]int32, n*k),
		Count: make([]int32, n), Overflow: make([]bool, n)}
	inf := float32(math.Inf(1))
	for j := range c.T {
		c.T[j], c.Prim[j], c.Shape[j] = inf, InvalidID, InvalidID
	}
	return c
}

// Rows returns the row count.
func (c *Crossings) Rows() int { return len(c.Count) }

// SetOverflow derives Overflow from Count (Count > K) for every row.
func (c *Crossings) SetOverflow() {
	for i, n := range c.Count {
		c.Overflow[i] = int(n) > c.K
	}
}

// Place copies part (rows [lo, lo+part.Rows()) of c, same K) into c.
func (c *Crossings) Place(lo int, part *Crossings) error {
	if part.K != c.K || lo < 0 || lo+part.Rows() > c.Rows() {
		return fmt.Errorf("geom: crossings part of %d rows (k %d) at row %d of %d (k %d)", part.Rows(), part.K, lo, c.Rows(), c.K)
	}
	k := c.K
	copy(c.T[lo*k:], part.T)
	copy(c.Prim[lo*k:], part.Prim)
	copy(c.Shape[lo*k:], part.Shape)
	copy(c.Count[lo:], part.Count)
	copy(c.Overflow[lo:], part.Overflow)
	return nil
}

// CheckCrossingsK validates the k of the crossings query: 1 ≤ k ≤
// MaxCrossingsK, else an *ArgumentError (ErrInvalidArgument).
func CheckCrossingsK(k int) error {
	if k < 1 || k > MaxCrossingsK {
		return &ArgumentError{Field: "k", Reason: fmt.Sprintf("%d not in [1,%d]", k, MaxCrossingsK)}
	}
	return nil
}

// CheckCrossings validates a crossings request before anything is
// allocated: the segments (CheckSegments), k (CheckCrossingsK) and a record
// of n·k slots and n rows within limit bytes (HostMemoryLimit for a host
// record). It returns the row count n. Errors: *LengthError (ErrLength),
// *ArgumentError (ErrInvalidArgument), *AllocationError (ErrTooLarge).
func CheckCrossings(start, end []float32, active []bool, k int, limit int64) (int, error) {
	n, err := CheckSegments(start, end, active)
	if err != nil {
		return 0, err
	}
	if err := CheckCrossingsK(k); err != nil {
		return 0, err
	}
	if _, err := CheckAlloc("crossings record", limit, n, k*CrossingSlotBytes+CrossingRowBytes); err != nil {
		return 0, err
	}
	return n, nil
}

// CrossingLess is the order of the kept hits: by t, then by global prim id.
func CrossingLess(t0 float32, p0 int32, t1 float32, p1 int32) bool {
	return t0 < t1 || (t0 == t1 && p0 < p1)
}
