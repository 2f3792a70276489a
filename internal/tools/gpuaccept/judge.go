package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rayd-go/rayd/internal/buildinfo"
	"github.com/rayd-go/rayd/internal/gpumark"
)

// counts summarise a suite (or all suites). The first group counts
// top-level tests; the second every test and subtest.
type counts struct {
	Tests       int `json:"tests"`
	GPUPassed   int `json:"gpu_passed"`
	GPUDeferred int `json:"gpu_deferred"`
	CPUPassed   int `json:"cpu_passed"`
	GPUSingle   int `json:"gpu_gated_1_device"`
	GPUMulti    int `json:"gpu_gated_2_or_more_devices"`

	Subtests int `json:"subtests"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	Deferred int `json:"deferred"`
}

func (c *counts) add(o counts) {
	c.Tests += o.Tests
	c.GPUPassed += o.GPUPassed
	c.GPUDeferred += o.GPUDeferred
	c.CPUPassed += o.CPUPassed
	c.GPUSingle += o.GPUSingle
	c.GPUMulti += o.GPUMulti
	c.Subtests += o.Subtests
	c.Failed += o.Failed
	c.Skipped += o.Skipped
	c.Deferred += o.Deferred
}

// suiteReport is one suite in the evidence.
type suiteReport struct {
	Name     string          `json:"name"`
	Build    buildinfo.Stamp `json:"build"` // read from the binary file
	ExitCode int             `json:"exit_code"`
	Seconds  float64         `json:"seconds"`
	Counts   counts          `json:"counts"`
	Expected *expectation    `json:"expected,omitempty"`
	Problems []string        `json:"problems,omitempty"`
	Tests    []*testRecord   `json:"tests"`
	LogTail  string          `json:"log_tail,omitempty"`
}

// judgeEnv is what a suite is judged against.
type judgeEnv struct {
	want    buildinfo.Stamp // gpuaccept's own stamp
	visible int             // devices on this machine
	census  bool            // count only: no GPU is expected
}

// tally counts s's tests.
func tally(s *stream) counts {
	var c counts
	for _, t := range s.tests {
		switch t.Outcome {
		case outFail, outNoResult:
			c.Failed++
		case outSkip:
			c.Skipped++
		case outDeferred:
			c.Deferred++
		}
		if !t.topLevel() {
			c.Subtests++
			continue
		}
		c.Tests++
		needs, ran, deferred := 0, false, false
		for _, u := range s.tree(t) {
			if u.Needs > 0 && (needs == 0 || u.Needs < needs) {
				needs = u.Needs
			}
			for _, m := range u.markers {
				ran = ran || m.State == gpumark.Ran
				deferred = deferred || m.State == gpumark.Deferred
			}
		}
		switch {
		case needs == 0:
			if t.Outcome == outPass {
				c.CPUPassed++
			}
			continue
		case needs == 1:
			c.GPUSingle++
		default:
			c.GPUMulti++
		}
		switch {
		case ran && t.Outcome == outPass:
			c.GPUPassed++
		case !ran && deferred && (t.Outcome == outPass || t.Outcome == outDeferred):
			c.GPUDeferred++
		}
	}
	return c
}

// judge fills r's counts and problems from the parsed stream.
func judge(r *suiteReport, s *stream, exp *expectation, env judgeEnv) {
	r.Tests = s.tests
	r.Counts = tally(s)
	r.Expected = exp
	add := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	if r.ExitCode != 0 {
		add("the binary exited with status %d", r.ExitCode)
	}
	if r.Counts.Tests == 0 {
		add("ran no tests")
	}
	if !env.census && r.Build != env.want {
		add("built from %s, gpuaccept from %s", r.Build, env.want)
	}
	var failed, skipped, early, unavailable, bad []string
	builds := map[string]bool{}
	for _, t := range s.tests {
		switch t.Outcome {
		case outFail:
			failed = append(failed, t.Name)
		case outNoResult:
			failed = append(failed, t.Name+" (no result)")
		case outSkip:
			if env.census && unavailableGate(t) {
				break // counting on a machine without a GPU: the gate skips
			}
			what := t.Name
			if t.GPU {
				what += " (GPU-gated)"
			}
			skipped = append(skipped, what)
		case outDeferred:
			if t.Needs <= env.visible {
				early = append(early, fmt.Sprintf("%s (needs %d, %d visible)", t.Name, t.Needs, env.visible))
			}
		}
		for _, m := range t.markers {
			builds[m.Build] = true
			if m.State == gpumark.Unavailable {
				unavailable = append(unavailable, t.Name)
			}
		}
		bad = append(bad, t.bad...)
	}
	list := func(what string, names []string) {
		if len(names) > 0 {
			add("%d %s: %s", len(names), what, strings.Join(names, ", "))
		}
	}
	list("failed", failed)
	list("skipped", skipped)
	list("deferred although the devices are visible", early)
	list("malformed GPU markers", bad)
	if !env.census {
		list("reached a GPU gate without a GPU", unavailable)
		for b := range builds {
			if b != env.want.String() {
				add("tests report build %s, gpuaccept is %s", b, env.want)
			}
		}
	}
	if exp == nil {
		add("not in the suite list (internal/tools/gpuaccept/suites.json)")
	} else {
		if r.Counts.GPUSingle < exp.MinGPU {
			add("%d top-level tests gated on 1 device, the list expects at least %d", r.Counts.GPUSingle, exp.MinGPU)
		}
		if r.Counts.GPUMulti < exp.MinMulti {
			add("%d top-level tests gated on 2 or more devices, the list expects at least %d", r.Counts.GPUMulti, exp.MinMulti)
		}
	}
	sort.Strings(r.Problems)
	if len(r.Problems) > 0 {
		tail := strings.Join(s.tail, "\n")
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		r.LogTail = tail
	}
}

// missing lists the suites of the list that were not run.
func missing(e *expectations, ran []suiteReport) []string {
	seen := map[string]bool{}
	for _, r := range ran {
		seen[r.Name] = true
	}
	var out []string
	for _, s := range e.Suites {
		if !seen[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out
}

// unavailableGate reports a test that stopped at a GPU gate without a GPU.
func unavailableGate(t *testRecord) bool {
	for _, m := range t.markers {
		if m.State == gpumark.Unavailable {
			return true
		}
	}
	return false
}
