package geom

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// planeBlockers is a SegmentBlockers over one "prim" 7, the plane z = 0:
// a segment is blocked when its end points lie strictly on both sides and
// 7 is not in its ignore row. It records every call.
type planeBlockers struct{ calls, segments int }

func (p *planeBlockers) query(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
	p.calls++
	n := len(start) / 3
	p.segments += n
	out := make([]int32, n)
	for i := range n {
		out[i] = -1
		if !active[i] || (k > 0 && slices.Contains(ignore[i*k:i*k+k], 7)) {
			continue
		}
		if start[3*i+2]*end[3*i+2] < 0 {
			out[i] = 7
		}
	}
	return out, nil
}

func TestVisiblePair(t *testing.T) {
	var q planeBlockers
	nan := float32(math.NaN())
	start := []float32{0, 0, 1, 0, 0, 1, 0, 0, 1, nan, 0, 1}
	endA := []float32{0, 0, 2, 0, 0, -1, 0, 0, -1, 0, 0, 2}
	endB := []float32{0, 0, -1, 0, 0, 3, 0, 0, -1, 0, 0, 2}
	ignore := []int32{-1, -1, 7, -1, -1, -1}
	a, b, err := VisiblePair(start, endA, endB, ignore[:4], nil, q.query)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, true, false}; !slices.Equal(a, want) {
		t.Errorf("visible_a %v, want %v", a, want)
	}
	if want := []bool{false, true, true, false}; !slices.Equal(b, want) {
		t.Errorf("visible_b %v, want %v", b, want)
	}
	a, _, err = VisiblePair(start, endA, endB, nil, []bool{false, true, true, true}, q.query)
	if err != nil || a[0] || a[2] {
		t.Errorf("inactive row 0 / no ignore: %v %v", a, err)
	}
	if _, _, err := VisiblePair(start, endA, endB, ignore[:5], nil, q.query); !errors.Is(err, ErrLength) {
		t.Errorf("ignore of 5 over 4 rows: %v", err)
	}
	if _, _, err := VisiblePair(start, endA, endB[:3], nil, nil, q.query); !errors.Is(err, ErrLength) {
		t.Errorf("short end_b: %v", err)
	}
}

func TestVisibleEdge(t *testing.T) {
	var q planeBlockers
	// Source above the plane; the edge runs from z = −1 to z = 3 (t 0..4
	// along (0,0,1)): with the default fractions the samples at t = 3, 4
	// are above the plane, so the edge is visible; restricted to t ≤ 0.5
	// it is not.
	e := EdgeSamples{Source: []float32{0, 0, 1, 0, 0, 1}, Position: []float32{1, 0, -1, 1, 0, -1},
		Direction: []float32{0, 0, 1, 0, 0, 1}, TMin: []float32{0, 0}, TMax: []float32{4, 0.5}}
	got, err := VisibleEdge(e, q.query)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []bool{true, false}) || q.segments != 10 {
		t.Fatalf("got %v over %d segments, want [true false] over 10", got, q.segments)
	}
	e.Fractions = []float32{1}
	e.TMax = []float32{0.9, 1.5}
	got, _ = VisibleEdge(e, q.query)
	if !slices.Equal(got, []bool{false, true}) {
		t.Fatalf("one fraction: %v", got)
	}
	e.Active = []bool{false, true}
	if got, _ = VisibleEdge(e, q.query); got[0] {
		t.Fatal("inactive row visible")
	}
	for _, fr := range [][]float32{make([]float32, 17), {float32(math.Inf(1))}, {}} {
		e.Fractions = fr
		if _, err := VisibleEdge(e, q.query); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("fractions %v: %v", fr, err)
		}
	}
}

func TestVisibleChain(t *testing.T) {
	var q planeBlockers
	nan := float32(math.NaN())
	// Three chains of 4 points: the first crosses z = 0 on segment 2, the
	// second never does, the third crosses on segment 0 but its length 0
	// walks nothing; the fourth has a NaN beyond its walked segments.
	pts := []float32{
		0, 0, 3, 0, 0, 2, 0, 0, 1, 0, 0, -1,
		0, 0, 3, 0, 0, 2, 0, 0, 1, 0, 0, 0.5,
		0, 0, 1, 0, 0, -1, 0, 0, 1, 0, 0, -1,
		0, 0, 1, 0, 0, 2, nan, 0, 0, 0, 0, 0,
	}
	got, err := VisibleChain(pts, 4, []int32{3, 9, 0, 1}, nil, nil, q.query)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.AllVisible, []bool{false, true, true, true}) ||
		!slices.Equal(got.FirstBlockedSegment, []int32{2, -1, -1, -1}) ||
		!slices.Equal(got.FirstBlockedPrim, []int32{7, -1, -1, -1}) {
		t.Fatalf("got %+v", got)
	}
	ignore := make([]int32, 4*3)
	for i := range ignore {
		ignore[i] = -1
	}
	ignore[2] = 7 // row 0, segment 2
	got, _ = VisibleChain(pts, 4, []int32{3, 9, 0, 3}, ignore, []bool{true, false, true, true}, q.query)
	if !slices.Equal(got.AllVisible, []bool{true, false, true, false}) || got.FirstBlockedSegment[1] != -1 {
		t.Fatalf("ignored blocker / inactive / NaN walked: %+v", got)
	}
	if _, err := VisibleChain(pts, 1, nil, nil, nil, q.query); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("P = 1: %v", err)
	}
	if _, err := VisibleChain(pts, 4, []int32{1}, nil, nil, q.query); !errors.Is(err, ErrLength) {
		t.Errorf("short chain_length: %v", err)
	}
	if _, err := VisibleChain(pts, 4, []int32{1, 1, 1, 1}, ignore[:5], nil, q.query); !errors.Is(err, ErrLength) {
		t.Errorf("ignore of 5: %v", err)
	}
}
