package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/buildinfo"
	"github.com/rayd-go/rayd/internal/gpumark"
)

// fixtureEnv makes this test binary a fake GPU suite: TestFixtureSuite
// then produces the tests of the named mode, and the harness tests run the
// binary through gpuaccept's own runner, parser and judge.
const fixtureEnv = "RAYD_GPUACCEPT_FIXTURE"

// fixture produces the tests of a fake suite.
func fixture(t *testing.T, mode string) {
	switch mode {
	case "mixed":
		t.Run("cpu", func(t *testing.T) {
			t.Log("plain output")
			t.Log("--- PASS: TestNotAFramingLine (0.00s)") // output, not a result
		})
		t.Run("gpu", func(t *testing.T) {
			gpumark.Mark(t, 1, 1, gpumark.Ran)
			t.Run("inner", func(t *testing.T) {})
		})
		t.Run("two_devices", func(t *testing.T) {
			gpumark.Mark(t, 2, 1, gpumark.Deferred)
			t.Skip(gpumark.DeferReason(2, 1))
		})
	case "gated-skip":
		t.Run("gpu", func(t *testing.T) {
			gpumark.Mark(t, 1, 1, gpumark.Ran)
			t.Skip("a GPU test that skips after its gate")
		})
	case "fail":
		t.Run("cpu", func(t *testing.T) { t.Log("passing output") })
		t.Run("gpu", func(t *testing.T) {
			gpumark.Mark(t, 1, 1, gpumark.Ran)
			t.Cleanup(func() { t.Log("random seed: RAYD_TEST_SEED=123") })
			t.Error("wrong result")
		})
	}
}

// runFixture runs this binary as the fake suite of mode (args select the
// tests; none: TestFixtureSuite) and judges it.
func runFixture(t *testing.T, mode string, env judgeEnv, exp *expectation, args ...string) suiteReport {
	t.Helper()
	t.Setenv(fixtureEnv, mode)
	if len(args) == 0 {
		args = []string{"-test.run=^TestFixtureSuite$"}
	}
	r, s := runSuite(os.Args[0], runOptions{timeout: time.Minute, args: args})
	judge(&r, s, exp, env)
	return r
}

func here() judgeEnv { return judgeEnv{want: buildinfo.Get(), visible: 1} }

func byName(r suiteReport) map[string]*testRecord {
	m := map[string]*testRecord{}
	for _, t := range r.Tests {
		m[t.Name] = t
	}
	return m
}

// TestFixtureSuite is the fake suite when run under fixtureEnv. Run
// normally, it checks that gpuaccept reads a real test binary's framed
// output: every test and subtest by name, outcome and GPU work, a
// deferral counted apart, and output that looks like framing ignored.
func TestFixtureSuite(t *testing.T) {
	if mode := os.Getenv(fixtureEnv); mode != "" {
		fixture(t, mode)
		return
	}
	r := runFixture(t, "mixed", here(), &expectation{Name: "fixture", MinGPU: 1})
	assert.Empty(t, r.Problems)
	assert.Zero(t, r.ExitCode)
	tests := byName(r)
	require.Len(t, tests, 5, "%v", tests)
	for name, want := range map[string]struct {
		outcome string
		gpu     bool
	}{
		"TestFixtureSuite":             {outPass, true},
		"TestFixtureSuite/cpu":         {outPass, false},
		"TestFixtureSuite/gpu":         {outPass, true},
		"TestFixtureSuite/gpu/inner":   {outPass, true},
		"TestFixtureSuite/two_devices": {outDeferred, true},
	} {
		require.Contains(t, tests, name)
		assert.Equal(t, want.outcome, tests[name].Outcome, name)
		assert.Equal(t, want.gpu, tests[name].GPU, name)
	}
	assert.Equal(t, "needs 2 devices, 1 visible", tests["TestFixtureSuite/two_devices"].Deferred)
	assert.Equal(t, counts{Tests: 1, GPUPassed: 1, GPUSingle: 1, Subtests: 4, Deferred: 1}, r.Counts)
	assert.Equal(t, buildinfo.Get(), r.Build)
}

// TestASuiteWithNoTestsFails: a binary that runs zero tests is no evidence.
func TestASuiteWithNoTestsFails(t *testing.T) {
	r := runFixture(t, "mixed", here(), &expectation{Name: "fixture", MinGPU: 1}, "-test.run=^$")
	assert.Zero(t, r.ExitCode)
	assert.Contains(t, r.Problems, "ran no tests")
	assert.Contains(t, r.Problems, "0 top-level tests gated on 1 device, the list expects at least 1")
}

// TestAStampMismatchFails: a suite built from another commit than
// gpuaccept (the binary's file and the markers its tests print) fails.
func TestAStampMismatchFails(t *testing.T) {
	env := here()
	env.want = buildinfo.Stamp{Commit: "0123456789abcdef0123456789abcdef01234567", Source: "ldflags"}
	r := runFixture(t, "mixed", env, &expectation{Name: "fixture", MinGPU: 1})
	joined := strings.Join(r.Problems, "\n")
	assert.Contains(t, joined, "built from "+buildinfo.Get().String()+", gpuaccept from 0123456789abcdef0123456789abcdef01234567")
	assert.Contains(t, joined, "tests report build "+buildinfo.Get().String())
}

// TestAGPUGatedTestThatSkipsFails: only a deferral at the gate may skip.
func TestAGPUGatedTestThatSkipsFails(t *testing.T) {
	r := runFixture(t, "gated-skip", here(), &expectation{Name: "fixture", MinGPU: 1})
	assert.Contains(t, r.Problems, "1 skipped: TestFixtureSuite/gpu (GPU-gated)")
	assert.Equal(t, 1, r.Counts.Skipped)
	assert.NotEmpty(t, r.LogTail)
}

// TestAFailingGPUTestFails and the binary's status is recorded.
func TestAFailingGPUTestFails(t *testing.T) {
	r := runFixture(t, "fail", here(), &expectation{Name: "fixture", MinGPU: 1})
	assert.Equal(t, 1, r.ExitCode)
	assert.Contains(t, r.Problems, "the binary exited with status 1")
	assert.Contains(t, r.Problems, "2 failed: TestFixtureSuite, TestFixtureSuite/gpu")
	tests := byName(r)
	require.Contains(t, tests, "TestFixtureSuite/gpu")
	gpu := strings.Join(tests["TestFixtureSuite/gpu"].Output, "\n")
	assert.Contains(t, gpu, "harness_test.go:")
	assert.Contains(t, gpu, ": wrong result")
	assert.Contains(t, gpu, ": random seed: RAYD_TEST_SEED=123")
	assert.NotContains(t, gpu, "passing output")
	whole := strings.Join(tests["TestFixtureSuite"].Output, "\n")
	assert.Contains(t, whole, "=== RUN   TestFixtureSuite/gpu")
	assert.Contains(t, whole, ": wrong result")
	assert.Contains(t, whole, "--- FAIL: TestFixtureSuite/gpu")
	require.Contains(t, tests, "TestFixtureSuite/cpu")
	assert.Empty(t, tests["TestFixtureSuite/cpu"].Output)
}

// TestADeferralWhereTheDevicesAreIsAFailure: on a machine with two
// devices, a test needing two may not be deferred.
func TestADeferralWhereTheDevicesAreIsAFailure(t *testing.T) {
	env := here()
	env.visible = 2
	r := runFixture(t, "mixed", env, &expectation{Name: "fixture", MinGPU: 1})
	assert.Contains(t, r.Problems, "1 deferred although the devices are visible: TestFixtureSuite/two_devices (needs 2, 2 visible)")
}

// TestASuiteBelowItsMinimumFails, and one missing from the list too.
func TestASuiteBelowItsMinimumFails(t *testing.T) {
	r := runFixture(t, "mixed", here(), &expectation{Name: "fixture", MinGPU: 2, MinMulti: 1})
	assert.Contains(t, r.Problems, "1 top-level tests gated on 1 device, the list expects at least 2")
	assert.Contains(t, r.Problems, "0 top-level tests gated on 2 or more devices, the list expects at least 1")
	r = runFixture(t, "mixed", here(), nil)
	assert.Contains(t, r.Problems, "not in the suite list (internal/tools/gpuaccept/suites.json)")
}
