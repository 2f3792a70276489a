package ref

import (
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

func TestVisibleSegmentRules(t *testing.T) {
	floor := quadMesh([3]float32{-2, -2, 0}, [3]float32{4, 0, 0}, [3]float32{0, 4, 0})
	ceiling := quadMesh([3]float32{-2, -2, 1}, [3]float32{4, 0, 0}, [3]float32{0, 4, 0})
	nan := float32(math.NaN())
	cases := []struct {
		name       string
		start, end [3]float32
		active     bool
		want       bool
	}{
		{"blocked by floor", [3]float32{0, 0, .5}, [3]float32{.3, .2, -1}, true, false},
		{"blocked by ceiling", [3]float32{0, 0, .5}, [3]float32{0, 0, 3}, true, false},
		{"between the planes", [3]float32{-1, 0, .5}, [3]float32{1, 1, .7}, true, true},
		{"start on floor", [3]float32{.3, .3, 0}, [3]float32{.5, .1, .9}, true, true},
		{"end on floor", [3]float32{.3, .3, .6}, [3]float32{-.7, .4, 0}, true, true},
		{"both on surfaces", [3]float32{.3, .3, 0}, [3]float32{-.2, .1, 1}, true, true},
		{"through floor from surface", [3]float32{.3, .3, 1}, [3]float32{.3, .3, -1}, true, false},
		{"short segment through surface", [3]float32{0, 0, -5e-6}, [3]float32{0, 0, 5e-6}, true, true},
		{"zero segment", [3]float32{0, 0, 0}, [3]float32{0, 0, 0}, true, true},
		{"inactive", [3]float32{-1, 0, .5}, [3]float32{1, 1, .7}, false, false},
		{"nan", [3]float32{nan, 0, .5}, [3]float32{0, 0, -1}, true, true},
		{"outside the quads", [3]float32{3, 3, 2}, [3]float32{3, 3, -2}, true, true},
	}
	var start, end []float32
	var active []bool
	for _, c := range cases {
		start = append(start, c.start[:]...)
		end = append(end, c.end[:]...)
		active = append(active, c.active)
	}
	for _, s := range both(t, floor, ceiling) {
		got, err := s.Visible(start, end, active)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			if got[i] != c.want {
				t.Errorf("%s: visible %v, want %v", c.name, got[i], c.want)
			}
		}
		all, err := s.Visible(start, end, nil)
		if err != nil || !all[9] {
			t.Errorf("empty active must mean all active: %v %v", all, err)
		}
	}
}

// TestVisibleMatchesIntersect: for segments that do not start or end near a
// surface, visibility agrees with an intersect query of the same ray.
func TestVisibleMatchesIntersect(t *testing.T) {
	r := newRand(t)
	for _, s := range both(t, sphereMesh([3]float32{}, .8, 14, 7), soupMesh(r, 200, .1)) {
		var start, end []float32
		for range 1000 {
			for range 3 {
				start = append(start, float32(r.Float64()*4-2))
				end = append(end, float32(r.Float64()*4-2))
			}
		}
		vis, err := s.Visible(start, end, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vis {
			a, b := row3(start, i), row3(end, i)
			dir := [3]float32{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
			hit, ok := s.Closest(a, dir, 0, 1)
			// Only rows whose closest blocker is clearly inside the segment.
			if ok && hit.T > 1e-3 && hit.T < 1-1e-3 && vis[i] {
				t.Fatalf("row %d: blocker at t=%g but visible", i, hit.T)
			}
			if _, any := s.Closest(a, dir, -1e-3, 1+1e-3); !any && !vis[i] {
				t.Fatalf("row %d: nothing near the segment but blocked", i)
			}
		}
	}
}

// The contract's split on non-finite rows (spec §0.2, §4): visible traces
// the row and finds no hit (visible: true); the variants treat it as
// inactive (false).
func TestNonFiniteRowsVisibleVersusVariants(t *testing.T) {
	s, _ := scenes(t, unitTriangle)
	nan := float32(math.NaN())
	start := []float32{nan, 0.25, 1, 0.25, 0.25, 1}
	end := []float32{0.25, 0.25, -1, 0.25, 0.25, -1}
	vis, err := s.Visible(start, end, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !vis[0] || vis[1] {
		t.Errorf("visible: NaN row %v (want true, a miss), blocked row %v (want false)", vis[0], vis[1])
	}
	a, b, err := geom.VisiblePair(start, end, end, nil, nil, s.SegmentBlockers)
	if err != nil {
		t.Fatal(err)
	}
	if a[0] || b[0] {
		t.Errorf("visible_pair: NaN row (%v, %v), want (false, false): inactive", a[0], b[0])
	}
}
