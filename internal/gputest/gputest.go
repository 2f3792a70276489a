// Package gputest holds the helpers GPU-tier tests use to decide whether
// they can run. A test that needs the CUDA driver and n devices calls
// MustHaveDevices, which
//
//   - with the driver and at least n devices, marks the test as GPU work
//     and returns the ordinals;
//   - with the driver and at least one device but fewer than n, defers the
//     test: it skips with the reason "deferred: needs n devices, m visible"
//     and a machine-readable marker, on every machine, because the test
//     belongs to a larger one (gpuaccept counts it as deferred, neither a
//     pass nor a failure);
//   - without a driver or without any device, skips with a printed reason,
//     or, when RAYD_REQUIRE_GPU=1, fails: that is how `make gpu-accept`
//     guarantees that nothing skips on a GPU machine.
//
// Every outcome leaves a package gpumark marker (with the binary's build
// stamp) in the test's -test.v output.
package gputest

import (
	"fmt"
	"os"
	"testing"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gpumark"
)

// RequireEnv is the environment variable that forbids GPU skips.
const RequireEnv = "RAYD_REQUIRE_GPU"

// Available returns the visible device count, or the reason there is none.
func Available() (int, error) {
	n, err := driver.DeviceCount()
	if err != nil {
		return 0, err
	}
	return n, nil
}

// MustHaveDevices gates t on n devices (see the package comment) and
// returns the ordinals 0..count-1 of every visible device.
func MustHaveDevices(t testing.TB, n int) []int {
	t.Helper()
	count, err := Available()
	return gate(t, n, count, err, os.Getenv(RequireEnv) == "1")
}

// gate is MustHaveDevices for a given device count or driver error.
func gate(t testing.TB, n, count int, err error, require bool) []int {
	t.Helper()
	n = max(n, 1)
	reason := ""
	switch {
	case err != nil:
		reason = fmt.Sprintf("no CUDA driver: %v", err)
	case count == 0:
		reason = "no CUDA device visible"
	case count < n:
		gpumark.Mark(t, n, count, gpumark.Deferred)
		t.Skip(gpumark.DeferReason(n, count))
		return nil
	}
	if reason != "" {
		gpumark.Mark(t, n, 0, gpumark.Unavailable)
		if require {
			t.Fatalf("%s (and %s=1 forbids skipping)", reason, RequireEnv)
		}
		t.Skip(reason)
		return nil
	}
	gpumark.Mark(t, n, count, gpumark.Ran)
	ords := make([]int, count)
	for i := range ords {
		ords[i] = i
	}
	return ords
}

// ReplicaDevices gates t on one device (as MustHaveDevices(t, 1)) and
// returns the device list of a replicated-scene test: [0, 1] where two
// devices are visible, else [0, 0] with sameDevice true, for which the
// caller sets MultiDeviceOptions.AllowSameDevice: the whole replicated path
// then runs as two replicas on the one GPU.
func ReplicaDevices(t testing.TB) (devices []int, sameDevice bool) {
	t.Helper()
	ords := MustHaveDevices(t, 1)
	if len(ords) >= 2 {
		return []int{0, 1}, false
	}
	return []int{0, 0}, true
}
