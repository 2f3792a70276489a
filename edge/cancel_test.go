package edge

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
)

// A deadline stops every query between blocks of rows.
func TestQueriesHonourADeadline(t *testing.T) {
	s := NewScene(mustTables(t, workload.GridMesh(100, 2)))
	const n = 1 << 20
	p := make([]float32, 3*n)
	d := make([]float32, 3*n)
	for i := range n {
		p[3*i], p[3*i+1], p[3*i+2] = 0.37, -0.21, 0.5
		d[3*i] = 1
	}
	for name, call := range map[string]func(context.Context) error{
		"point": func(ctx context.Context) error { _, err := s.NearestPointContext(ctx, p, nil); return err },
		"ray":   func(ctx context.Context) error { _, err := s.NearestRayContext(ctx, p, d, nil, nil); return err },
		"top-k": func(ctx context.Context) error { _, err := s.NearestKContext(ctx, p, 8, nil); return err },
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		t0 := time.Now()
		err := call(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v after %v, want context.DeadlineExceeded", name, err, time.Since(t0))
		}
		done, stop := context.WithCancel(t.Context())
		stop()
		if err := call(done); !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a cancelled context: %v", name, err)
		}
	}
}

func TestCheckTopK(t *testing.T) {
	if err := CheckTopK(10, 4, 10*4*TopKSlotBytes); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if err := CheckTopK(10, 4, 10*4*TopKSlotBytes-1); !errors.Is(err, geom.ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	if err := CheckTopK(10, MaxK+1, 0); !errors.Is(err, geom.ErrInvalidArgument) {
		t.Errorf("k too large: %v", err)
	}
	if err := CheckTopK(math.MaxInt/8, MaxK, 0); !errors.Is(err, geom.ErrTooLarge) {
		t.Errorf("overflow: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := CheckTopK(1<<40, MaxK, geom.HostMemoryLimit())
	runtime.ReadMemStats(&after)
	if !errors.Is(err, geom.ErrTooLarge) || after.TotalAlloc-before.TotalAlloc > 1<<16 {
		t.Errorf("a 2^40-row request: %v, %d bytes allocated", err, after.TotalAlloc-before.TotalAlloc)
	}
}
