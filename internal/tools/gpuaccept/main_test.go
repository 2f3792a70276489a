package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rayd-go/rayd/internal/buildinfo"
	"github.com/rayd-go/rayd/internal/evidence"
)

func TestConcludeNeedsEverySuiteAStampAndADevice(t *testing.T) {
	exp := &expectations{Suites: []expectation{{Name: "a", Package: "./a", MinGPU: 1}, {Name: "b", Package: "./b", MinGPU: 1}}}
	ev := &acceptance{Header: evidence.Header{Build: buildinfo.Stamp{Commit: "unknown"}},
		Suites: []suiteReport{{Name: "a", Problems: []string{"1 failed: TestX"}}}}
	conclude(ev, exp)
	assert.False(t, ev.Accepted)
	assert.Equal(t, []string{"b"}, ev.Missing)
	assert.ElementsMatch(t, []string{
		"gpuaccept carries no build stamp: build it with make gpu-bins",
		"no CUDA device visible",
		"suite b (package ./b) did not run: no bin/b.test",
		"a: 1 failed: TestX",
	}, ev.Problems)

	ev = &acceptance{Header: evidence.Header{Build: buildinfo.Stamp{Commit: "0123abc"}, Devices: []string{"NVIDIA H200"}}, Visible: 1,
		Suites: []suiteReport{{Name: "a"}, {Name: "b"}}}
	conclude(ev, exp)
	assert.True(t, ev.Accepted)
	assert.Empty(t, ev.Problems)
}

func TestSummaryPrintsGPUAndCPUCountsApart(t *testing.T) {
	ev := &acceptance{Header: evidence.Header{Build: buildinfo.Stamp{Commit: "0123456789abcdef", Dirty: true}, Devices: []string{"NVIDIA H200"}},
		Visible: 1, Accepted: true, Suites: make([]suiteReport, 10),
		Totals: counts{GPUPassed: 41, GPUDeferred: 39, CPUPassed: 160, Subtests: 120}}
	s := summary(ev)
	assert.Contains(t, s, "ACCEPTED: 10 suites")
	assert.Contains(t, s, "GPU-gated tests 41 passed, 39 deferred (need more than the 1 device(s) here)")
	assert.Contains(t, s, "CPU tests 160 passed")
	assert.Contains(t, s, "0123456789ab+dirty (built from a dirty tree)")
}
