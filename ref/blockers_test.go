package ref

import (
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// Two stacked floors: a segment from above through both is blocked by the
// upper one (prims 2, 3) first; ignoring them exposes the lower one (0, 1);
// ignoring all four makes it visible. Without ignore rows a segment is
// blocked exactly when Visible says so. The BVH and brute-force scenes agree.
func TestSegmentBlockersIgnoreRows(t *testing.T) {
	lower := quadMesh([3]float32{-2, -2, 0}, [3]float32{4, 0, 0}, [3]float32{0, 4, 0})
	upper := quadMesh([3]float32{-2, -2, 1}, [3]float32{4, 0, 0}, [3]float32{0, 4, 0})
	start := []float32{0.3, 0.2, 2, 0.3, 0.2, 2, 0.3, 0.2, 2, 0.3, 0.2, 2}
	end := []float32{0.1, 0.4, -1, 0.1, 0.4, -1, 0.1, 0.4, -1, 0.1, 0.4, -1}
	ignore := []int32{-1, -1, -1, -1, 2, 3, -1, -1, 0, 1, 2, 3, 0, 1, -1, -1}
	for _, s := range both(t, lower, upper) {
		got, err := s.SegmentBlockers(start, end, []bool{true, true, true, false}, ignore, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] < 2 || got[1] > 1 || got[1] < 0 || got[2] != -1 || got[3] != -1 {
			t.Fatalf("blockers %v: want upper, lower, none, inactive", got)
		}
		r := newRand(t)
		o, d, _ := randomRays(r, s.Tables(), 400)
		e := make([]float32, len(o))
		for i := range e {
			e[i] = o[i] + 3*d[i]
		}
		blk, err := s.SegmentBlockers(o, e, nil, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		vis, err := s.Visible(o, e, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vis {
			if vis[i] != (blk[i] < 0) {
				t.Fatalf("row %d: visible %v, blocker %d", i, vis[i], blk[i])
			}
		}
	}
	s, _ := scenes(t, lower)
	if _, err := s.SegmentBlockers(start, end, nil, ignore[:5], 4); !isLength(err) {
		t.Fatalf("short ignore: %v", err)
	}
}

func isLength(err error) bool {
	_, ok := err.(*geom.LengthError)
	return ok
}
