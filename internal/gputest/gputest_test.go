package gputest

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gpumark"
)

// recorder is a testing.TB that records what gate did to it. Skip and
// Fatalf end the calling goroutine, as the testing package's do.
type recorder struct {
	testing.TB
	attrs   map[string]string
	skipped string
	fatal   string
}

func (r *recorder) Helper()          {}
func (r *recorder) Attr(k, v string) { r.attrs[k] = v }
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls gate on a fresh recorder in its own goroutine.
func run(t *testing.T, n, count int, err error, requireGPU bool) (*recorder, []int) {
	r := &recorder{TB: t, attrs: map[string]string{}}
	var ords []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		ords = gate(r, n, count, err, requireGPU)
	}()
	<-done
	return r, ords
}

func marker(t *testing.T, r *recorder) gpumark.Marker {
	m, err := gpumark.Parse(r.attrs[gpumark.Key])
	require.NoError(t, err)
	return m
}

func TestEnoughDevicesMarkTheTestAsGPUWork(t *testing.T) {
	r, ords := run(t, 2, 3, nil, true)
	assert.Equal(t, []int{0, 1, 2}, ords)
	assert.Empty(t, r.skipped)
	assert.Empty(t, r.fatal)
	m := marker(t, r)
	assert.Equal(t, gpumark.Ran, m.State)
	assert.Equal(t, 2, m.Needs)
	assert.Equal(t, 3, m.Visible)
}

func TestTooFewDevicesDeferEvenWhenGPUsAreRequired(t *testing.T) {
	for _, requireGPU := range []bool{false, true} {
		r, ords := run(t, 2, 1, nil, requireGPU)
		assert.Nil(t, ords)
		assert.Empty(t, r.fatal, "a 1-GPU machine cannot run a 2-GPU test: deferred, not failed")
		assert.Equal(t, "deferred: needs 2 devices, 1 visible", r.skipped)
		m := marker(t, r)
		assert.Equal(t, gpumark.Deferred, m.State)
		assert.Equal(t, 2, m.Needs)
		assert.Equal(t, 1, m.Visible)
	}
}

func TestNoDriverOrNoDeviceSkipsOrFails(t *testing.T) {
	noDriver := errors.New("libcuda.so.1 not found")
	for _, tc := range []struct {
		count int
		err   error
		want  string
	}{{0, noDriver, "no CUDA driver: libcuda.so.1 not found"}, {0, nil, "no CUDA device visible"}} {
		r, _ := run(t, 1, tc.count, tc.err, false)
		assert.Equal(t, tc.want, r.skipped)
		assert.Equal(t, gpumark.Unavailable, marker(t, r).State)
		r, _ = run(t, 1, tc.count, tc.err, true)
		assert.Empty(t, r.skipped)
		assert.Contains(t, r.fatal, tc.want)
		assert.Contains(t, r.fatal, "RAYD_REQUIRE_GPU=1 forbids skipping")
	}
}
