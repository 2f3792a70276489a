// Package gputest holds the helpers GPU-tier tests use to decide whether
// they can run: a test that needs the CUDA driver or N devices calls
// MustHaveDevices, which skips it with a printed reason when (and only when)
// the driver or the devices are absent. Setting RAYD_REQUIRE_GPU=1 turns
// those skips into failures, which is how `make gpu-accept` guarantees that
// nothing skips on a GPU machine.
package gputest

import (
	"fmt"
	"os"
	"testing"

	"github.com/rayd-go/rayd/driver"
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

// MustHaveDevices skips t unless the driver loads and at least n devices are
// visible; it returns the ordinals 0..count-1. With RAYD_REQUIRE_GPU=1 a
// missing driver or device fails the test instead.
func MustHaveDevices(t testing.TB, n int) []int {
	t.Helper()
	count, err := Available()
	reason := ""
	switch {
	case err != nil:
		reason = fmt.Sprintf("no CUDA driver: %v", err)
	case count < n:
		reason = fmt.Sprintf("needs %d CUDA device(s), %d visible", n, count)
	}
	if reason != "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s (and %s=1 forbids skipping)", reason, RequireEnv)
		}
		t.Skip(reason)
	}
	ords := make([]int, count)
	for i := range ords {
		ords[i] = i
	}
	return ords
}
