package geom

import (
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		counts []int
		want   int64
		ok     bool
	}{
		{nil, 1, true},
		{[]int{3, 7}, 21, true},
		{[]int{0, math.MaxInt}, 0, true},
		{[]int{1 << 31, 1 << 31}, 1 << 62, true},
		{[]int{1 << 32, 1 << 32}, 0, false},
		{[]int{math.MaxInt, 2}, 0, false},
		{[]int{4, -1}, 0, false},
	} {
		got, ok := Bytes(c.counts...)
		if got != c.want || ok != c.ok {
			t.Errorf("Bytes(%v) = %d, %v; want %d, %v", c.counts, got, ok, c.want, c.ok)
		}
	}
}

func TestCheckAlloc(t *testing.T) {
	if n, err := CheckAlloc("buf", 100, 10, 10); err != nil || n != 100 {
		t.Errorf("at the limit: %d, %v", n, err)
	}
	_, err := CheckAlloc("buf", 100, 101)
	var ae *AllocationError
	if !errors.As(err, &ae) || !errors.Is(err, ErrTooLarge) || ae.Bytes != 101 || ae.Limit != 100 || ae.What != "buf" {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := CheckAlloc("buf", 0, math.MaxInt, 3); !errors.As(err, &ae) || !ae.Overflow {
		t.Errorf("overflow without a limit: %v", err)
	}
	if _, err := CheckAlloc("buf", 0, -2); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative count: %v", err)
	}
}

func TestHostMemoryLimitFollowsTheGoLimit(t *testing.T) {
	if l := HostMemoryLimit(); l <= 0 {
		t.Fatalf("HostMemoryLimit = %d", l)
	}
	old := debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(old)
	if l := HostMemoryLimit(); l > 1<<30 {
		t.Errorf("with GOMEMLIMIT 1 GiB the limit is %d", l)
	}
}

func TestCheckReflections(t *testing.T) {
	for _, c := range []struct {
		rows, bounces int
		limit         int64
		want          error
	}{
		{4, 1, 0, nil},
		{4, MaxBounces, 0, nil},
		{0, 3, 1, nil},
		{4, 0, 0, ErrInvalidArgument},
		{4, -7, 0, ErrInvalidArgument},
		{4, MaxBounces + 1, 0, ErrInvalidArgument},
		{1, 1 << 30, 0, ErrInvalidArgument},
		{1, math.MaxInt, 0, ErrInvalidArgument},
		{-1, 1, 0, ErrInvalidArgument},
		{1000, 4, 1000 * 4 * 21, nil},
		{1000, 4, 1000*4*21 - 1, ErrTooLarge},
		{math.MaxInt / 8, MaxBounces, 0, ErrTooLarge},
	} {
		err := CheckReflections(c.rows, c.bounces, true, c.limit)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("CheckReflections(%d, %d, limit %d) = %v, want %v", c.rows, c.bounces, c.limit, err, c.want)
		}
	}
	// Without the image sources a slot is 9 bytes.
	if err := CheckReflections(10, 2, false, 180); err != nil {
		t.Errorf("reduced record: %v", err)
	}
	if err := CheckReflections(10, 2, false, 179); !errors.Is(err, ErrTooLarge) {
		t.Errorf("reduced record over the limit: %v", err)
	}
}

// A 1<<30-bounce or MaxInt-bounce request, and a record far larger than the
// machine, are refused in well under 10 ms without a large allocation.
func TestHugeReflectionRequestsAreRefusedCheaply(t *testing.T) {
	limit := HostMemoryLimit()
	for _, c := range []struct{ rows, bounces int }{{1, 1 << 30}, {1024, 1 << 30}, {1, math.MaxInt}, {1 << 40, MaxBounces}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		err := CheckReflections(c.rows, c.bounces, true, limit)
		el := time.Since(t0)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("rows %d, bounces %d: accepted", c.rows, c.bounces)
		}
		if el > 10*time.Millisecond {
			t.Errorf("rows %d, bounces %d: refused after %v", c.rows, c.bounces, el)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<16 {
			t.Errorf("rows %d, bounces %d: allocated %d bytes to refuse", c.rows, c.bounces, grew)
		}
	}
	allocs := testing.AllocsPerRun(100, func() { _ = CheckReflections(1, math.MaxInt, true, limit) })
	if allocs > 4 {
		t.Errorf("refusal makes %v allocations (only the error and its text are expected)", allocs)
	}
}

func TestUpdateVerticesRefusalsAreInvalidArguments(t *testing.T) {
	tb, err := BuildTables([]Mesh{quad()})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{0, 1, -1} {
		err := tb.UpdateVertices(m, make([]float32, 12))
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("mesh %d: %v does not match ErrInvalidArgument", m, err)
		}
	}
}
