package ref

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
)

// cancelScene is a 2·200² = 80,000-triangle grid in z = 0 over [-1, 1]²
// and n rays straight down onto it (4,096 distinct rays repeated), every
// one a hit: far more work than a 20 ms deadline allows.
func cancelScene(t *testing.T, n int) (s *Scene, o, d []float32) {
	t.Helper()
	tb, err := geom.BuildTables([]geom.Mesh{gridMesh(200, 2, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = NewScene(tb); err != nil {
		t.Fatal(err)
	}
	o, d = make([]float32, 3*n), make([]float32, 3*n)
	const side = 64
	for i := range min(n, side*side) {
		o[3*i] = -0.99 + 1.98*float32(i%side)/side
		o[3*i+1] = -0.99 + 1.98*float32(i/side)/side
		o[3*i+2] = 1
		d[3*i+2] = -1
	}
	for k := 3 * side * side; k < len(o); k *= 2 {
		copy(o[k:], o[:k])
		copy(d[k:], d[:k])
	}
	return s, o, d
}

// withinBound runs a timed attempt up to three times and passes when one
// of them is within bound: on a loaded machine (every package's tests at
// once, under the race detector) one attempt may be descheduled, but a
// call that ignores its context is late every time.
func withinBound(t *testing.T, bound time.Duration, attempt func() time.Duration) {
	t.Helper()
	var got []time.Duration
	for range 3 {
		el := attempt()
		if el <= bound {
			return
		}
		got = append(got, el)
	}
	t.Errorf("every attempt took longer than %v: %v", bound, got)
}

// deadlineRows is the batch of the deadline tests: each call takes 1.5 s
// or more under the race detector on two cores, far beyond the bounds, while
// its output records stay small enough (tens of MB) that allocating and
// zeroing them does not eat the bound on a loaded machine, as 4M-row
// records did.
const deadlineRows = 1 << 19

// A 20 ms deadline on an intersect of deadlineRows rays returns
// context.DeadlineExceeded within 50 ms of the call instead of running the
// whole batch.
func TestIntersectHonoursADeadline(t *testing.T) {
	s, o, d := cancelScene(t, deadlineRows)
	withinBound(t, 50*time.Millisecond, func() time.Duration {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		h, err := s.IntersectContext(ctx, o, d, nil, nil, 0)
		el := time.Since(t0)
		if !errors.Is(err, context.DeadlineExceeded) || h != nil {
			t.Fatalf("after %v: hits %v, error %v; want context.DeadlineExceeded", el, h != nil, err)
		}
		return el
	})
	// The same call without a deadline completes (the scene really is hit).
	small := 1 << 12
	h, err := s.IntersectContext(t.Context(), o[:3*small], d[:3*small], nil, nil, 0)
	if err != nil || !h.Valid(0) || !h.Valid(small-1) {
		t.Fatalf("uncancelled call: %v", err)
	}
}

func TestQueriesOnACancelledContext(t *testing.T) {
	s, o, d := cancelScene(t, 1<<10)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.IntersectContext(ctx, o, d, nil, nil, geom.FlagsAll); !errors.Is(err, context.Canceled) {
		t.Errorf("intersect: %v", err)
	}
	if _, err := s.TraceReflectionsContext(ctx, o, d, nil, nil, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("trace_reflections: %v", err)
	}
	if _, err := s.VisibleContext(ctx, o, d, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("visible: %v", err)
	}
	if _, err := s.SegmentBlockersContext(ctx, o, d, nil, nil, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("segment blockers: %v", err)
	}
	// Validation still comes first.
	if _, err := s.TraceReflectionsContext(ctx, o, d, nil, nil, 0); !errors.Is(err, geom.ErrInvalidArgument) {
		t.Errorf("bad bounces on a cancelled context: %v", err)
	}
}

// A 10 ms deadline on trace_reflections(4) and visible of deadlineRows rows
// returns context.DeadlineExceeded within 100 ms.
func TestReflectionsAndVisibleHonourADeadline(t *testing.T) {
	s, o, d := cancelScene(t, deadlineRows)
	for name, call := range map[string]func(context.Context) error{
		"trace_reflections": func(ctx context.Context) error {
			_, err := s.TraceReflectionsContext(ctx, o, d, nil, nil, 4)
			return err
		},
		"visible": func(ctx context.Context) error { _, err := s.VisibleContext(ctx, o, d, nil); return err },
	} {
		t.Run(name, func(t *testing.T) {
			withinBound(t, 100*time.Millisecond, func() time.Duration {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				t0 := time.Now()
				if err := call(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("%s: %v", name, err)
				}
				return time.Since(t0)
			})
		})
	}
}

// The BVH build stops at a deadline too.
func TestSceneBuildHonoursTheContext(t *testing.T) {
	tb, err := geom.BuildTables([]geom.Mesh{gridMesh(400, 2, 0)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := NewSceneContext(ctx, tb); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled build: %v", err)
	}
	full := time.Now()
	if _, err := NewSceneContext(t.Context(), tb); err != nil {
		t.Fatal(err)
	}
	whole := time.Since(full)
	withinBound(t, whole/2, func() time.Duration {
		ctx, cancel := context.WithTimeout(t.Context(), whole/10)
		defer cancel()
		t0 := time.Now()
		if _, err := NewSceneContext(ctx, tb); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("build with a deadline of %v (whole build %v): %v", whole/10, whole, err)
		}
		return time.Since(t0)
	})
}

// A 1<<30-bounce or MaxInt-bounce request is refused before anything is
// allocated, even for a large batch.
func TestHugeBounceCountsAreRefusedBeforeAllocating(t *testing.T) {
	s, o, d := cancelScene(t, 1024)
	for _, b := range []int{1 << 30, math.MaxInt, geom.MaxBounces + 1} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		r, err := s.TraceReflections(o, d, nil, nil, b)
		el := time.Since(t0)
		runtime.ReadMemStats(&after)
		if r != nil || !errors.Is(err, geom.ErrInvalidArgument) {
			t.Fatalf("bounces %d: %v", b, err)
		}
		if el > 10*time.Millisecond {
			t.Errorf("bounces %d: refused after %v", b, el)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<16 {
			t.Errorf("bounces %d: %d bytes allocated to refuse", b, grew)
		}
	}
}
