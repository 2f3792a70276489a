package rayd_test

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
)

// Bounce counts no memory can hold are refused at once, before anything is
// allocated, with a typed error.
func TestHugeBounceCountsAreRefusedAtOnce(t *testing.T) {
	ctx := context.Background()
	s := cpuScene(t, unitTriangle())
	rays := rayd.Rays{Origins: []float32{0.2, 0.2, -1}, Directions: []float32{0, 0, 1}}
	for _, b := range []int{1 << 30, math.MaxInt, rayd.MaxBounces + 1} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := s.TraceReflections(ctx, rays, b)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, rayd.ErrInvalidArgument, "%d bounces", b)
		assert.Less(t, took, 10*time.Millisecond)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%d bounces allocated", b)
	}
}

// A deadline that expires during a long CPU call ends it promptly.
func TestCPUIntersectHonoursItsDeadline(t *testing.T) {
	m, o, d := workload.Light.Scaled(1 << 21).Build()
	s := cpuScene(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Intersect(ctx, rayd.Rays{Origins: o, Directions: d}, rayd.FlagsAll)
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, took, 250*time.Millisecond, "returned %v after a 20 ms deadline", took)
}

// One error vocabulary: a static mesh, bad options before any device
// probe, and a machine without devices.
func TestErrorsMatchTheSentinels(t *testing.T) {
	ctx := context.Background()
	static := unitTriangle()
	static.Dynamic = false
	s := cpuScene(t, static)
	err := s.UpdateVertices(ctx, 0, []float32{0, 0, 1, 1, 0, 1, 0, 1, 1})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument, "a static mesh")
	_, err = rayd.NewScene(ctx, []rayd.Mesh{unitTriangle()}, rayd.WithDevices(0, 1),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{Weights: []float64{1, 2, 3}}))
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument, "bad weights are refused before the devices are probed: %v", err)
	if n, derr := gputest.Available(); derr != nil || n == 0 {
		_, err = rayd.NewScene(ctx, []rayd.Mesh{testscene.Grid(4, 2, 0)}, rayd.WithDevices(0, 1))
		assert.ErrorIs(t, err, rayd.ErrMultiDeviceUnavailable)
		assert.ErrorIs(t, err, rayd.ErrBackendUnavailable)
	}
}
