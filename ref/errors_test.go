package ref

import (
	"errors"
	"sync"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

func TestNewSceneErrors(t *testing.T) {
	if _, err := NewScene(nil); !errors.Is(err, geom.ErrNoMeshes) {
		t.Errorf("nil tables: %v", err)
	}
	if _, err := NewScene(&geom.Tables{}); !errors.Is(err, geom.ErrNoMeshes) {
		t.Errorf("empty tables: %v", err)
	}
}

func TestValidationErrors(t *testing.T) {
	s, _ := scenes(t, unitTriangle)
	v6 := make([]float32, 6)
	lengthCases := []struct {
		name      string
		call      func() error
		field     string
		want, got int
	}{
		{"intersect o", func() error { _, err := s.Intersect(v6[:4], v6, nil, nil, geom.FlagsAll); return err }, "o", -1, 4},
		{"intersect d", func() error { _, err := s.Intersect(v6, v6[:3], nil, nil, geom.FlagsAll); return err }, "d", 6, 3},
		{"intersect tmax", func() error { _, err := s.Intersect(v6, v6, v6[:1], nil, geom.FlagsAll); return err }, "tmax", 2, 1},
		{"intersect active", func() error { _, err := s.Intersect(v6, v6, nil, make([]bool, 3), geom.FlagsAll); return err }, "active", 2, 3},
		{"reflections d", func() error { _, err := s.TraceReflections(v6, v6[:5], nil, nil, 1); return err }, "d", 6, 5},
		{"reflections tmax", func() error { _, err := s.TraceReflections(v6, v6, v6, nil, 1); return err }, "tmax", 2, 6},
		{"visible start", func() error { _, err := s.Visible(v6[:2], v6, nil); return err }, "start", -1, 2},
		{"visible end", func() error { _, err := s.Visible(v6, v6[:3], nil); return err }, "end", 6, 3},
		{"visible active", func() error { _, err := s.Visible(v6, v6, []bool{true}); return err }, "active", 2, 1},
	}
	for _, c := range lengthCases {
		err := c.call()
		var le *LengthError
		if !errors.Is(err, ErrLength) || !errors.As(err, &le) {
			t.Errorf("%s: %v is not a LengthError", c.name, err)
			continue
		}
		if le.Field != c.field || le.Want != c.want || le.Got != c.got {
			t.Errorf("%s: %+v, want field %s want %d got %d", c.name, *le, c.field, c.want, c.got)
		}
	}
	argCases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"flags", func() error { _, err := s.Intersect(v6, v6, nil, nil, 8); return err }, "flags"},
		{"zero bounces", func() error { _, err := s.TraceReflections(v6, v6, nil, nil, 0); return err }, "maxBounces"},
		{"negative bounces", func() error { _, err := s.TraceReflections(nil, nil, nil, nil, -3); return err }, "maxBounces"},
	}
	for _, c := range argCases {
		err := c.call()
		var ae *ArgumentError
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &ae) || ae.Field != c.field {
			t.Errorf("%s: %v", c.name, err)
		}
		if errors.Is(err, ErrLength) {
			t.Errorf("%s: an argument error must not match ErrLength", c.name)
		}
	}
}

func TestEmptyBatches(t *testing.T) {
	for _, s := range both(t, unitTriangle) {
		h, err := s.Intersect(nil, nil, nil, nil, geom.FlagsAll)
		if err != nil || h.Len() != 0 || h.Flags != geom.FlagsAll {
			t.Errorf("intersect: %v %v", h, err)
		}
		r, err := s.TraceReflections([]float32{}, []float32{}, nil, nil, 4)
		if err != nil || r.Len() != 0 || r.Bounces != 4 {
			t.Errorf("reflections: %v %v", r, err)
		}
		v, err := s.Visible(nil, nil, nil)
		if err != nil || v == nil || len(v) != 0 {
			t.Errorf("visible: %v %v", v, err)
		}
	}
}

// TestConcurrentQueriesAndRefit runs queries from several goroutines while
// another refits; run with -race.
func TestConcurrentQueriesAndRefit(t *testing.T) {
	m := sphereMesh([3]float32{}, 1, 16, 8)
	m.Dynamic = true
	tb, err := geom.BuildTables([]geom.Mesh{m})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScene(tb)
	if err != nil {
		t.Fatal(err)
	}
	r := newRand(t)
	o, d, _ := randomRays(r, tb, 2000)
	end := make([]float32, len(o))
	for i := range o {
		end[i] = o[i] + d[i]
	}
	want, _ := s.Intersect(o, d, nil, nil, geom.FlagsAll)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 3 {
				h, err := s.Intersect(o, d, nil, nil, geom.FlagsAll)
				if err != nil || !sameHits(h, want) {
					t.Error("concurrent intersect changed its answer")
				}
				if _, err := s.Visible(o, end, nil); err != nil {
					t.Error(err)
				}
				if _, err := s.TraceReflections(o, d, nil, nil, 2); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			s.Refit() // same vertices: answers must not change
		}
	})
	wg.Wait()
}
