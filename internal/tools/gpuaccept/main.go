// Command gpuaccept runs the prebuilt GPU-tier test binaries (make
// gpu-bins: go test -c, CGO_ENABLED=0, stamped with the commit) on a GPU
// machine and writes the acceptance evidence, tests/evidence/gpu-accept.json.
//
//	gpuaccept -out tests/evidence/gpu-accept.json bin/*.test
//
// Each binary runs with -test.v=test2json and RAYD_REQUIRE_GPU=1, from a
// fresh directory. gpuaccept parses the framed output itself (the machine
// needs no Go toolchain) and records every test and subtest by name with
// its outcome, its seconds and whether it is GPU work: internal/gputest
// marks each test at its GPU gate (package internal/gpumark), with the
// device count it needs and the test binary's build stamp.
//
// The record of a test that failed (outcome "fail", or "no result" when the
// binary ended before its --- line) also holds "output": the lines it
// printed from its === RUN on (its t.Log and t.Error messages, a seed it
// logged, a panic), with its subtests' output nested in, following the
// === PAUSE, === CONT and === NAME lines of parallel tests so that other
// tests' lines stay out. It keeps the first 50 and the last 150 lines, 32
// KiB in all; where lines were left out a line says so, and
// "output_lines_cut" counts them. Passing tests carry no output. A suite
// with a problem also keeps the last lines of the whole run, "log_tail".
//
// The run is accepted when nothing failed or skipped; every suite of the
// committed list (suites.json) ran, with at least its listed number of
// GPU-gated top-level tests, at least one test, and status 0; every binary,
// and every marker its tests printed, carries gpuaccept's own build stamp;
// and gpuaccept itself is stamped. A test that needs more devices than the
// machine has is deferred (it skips at its gate with a marker): counted
// apart, neither a pass nor a failure. The summary line prints the GPU-gated
// and CPU counts apart. gpuaccept exits 1 unless the run is accepted.
//
// gpuaccept -census bin/*.test runs the binaries without requiring a GPU
// and prints the GPU-gated tests each suite holds (a gate without a GPU
// still leaves its marker), as a suite list to commit.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rayd-go/rayd/internal/evidence"
	"github.com/rayd-go/rayd/ptx"
)

// acceptance is gpu-accept.json.
type acceptance struct {
	evidence.Header
	Visible int `json:"visible_devices"`
	// SuiteList is the SHA-256 of the suite list the run was judged by.
	SuiteList  string        `json:"suite_list_sha256"`
	Totals     counts        `json:"totals"`
	Missing    []string      `json:"missing_suites,omitempty"`
	Problems   []string      `json:"problems"`
	Accepted   bool          `json:"accepted"`
	Suites     []suiteReport `json:"suites"`
	headerFail error
}

func main() {
	out := flag.String("out", "tests/evidence/gpu-accept.json", "evidence file")
	timeout := flag.Duration("timeout", 8*time.Minute, "per-suite timeout")
	census := flag.Bool("census", false, "count the GPU-gated tests of each suite (no GPU needed, nothing accepted) and print a suite list")
	flag.Parse()
	os.Exit(run(flag.Args(), *out, *timeout, *census, os.Stdout))
}

func run(bins []string, out string, timeout time.Duration, census bool, w io.Writer) int {
	exp, err := loadExpectations(suitesJSON)
	if err != nil {
		fmt.Fprintln(w, err)
		return 2
	}
	h, herr := evidence.New(nil)
	ev := &acceptance{Header: h, Visible: len(h.Devices), SuiteList: ptx.SHA256Hex(suitesJSON), headerFail: herr}
	env := judgeEnv{want: h.Build, visible: ev.Visible, census: census}
	for _, bin := range bins {
		fmt.Fprintf(w, "== %s\n", suiteName(bin))
		r, s := runSuite(bin, runOptions{timeout: timeout, census: census})
		var ep *expectation
		if e, ok := exp.find(r.Name); ok {
			ep = &e
		}
		judge(&r, s, ep, env)
		ev.Suites = append(ev.Suites, r)
		ev.Totals.add(r.Counts)
		printSuite(w, r)
	}
	if census {
		return printCensus(w, ev.Suites)
	}
	conclude(ev, exp)
	b, err := json.MarshalIndent(ev, "", "  ")
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(out), 0o755); err == nil {
			err = os.WriteFile(out, append(b, '\n'), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(w, "gpuaccept:", err)
		return 1
	}
	for _, p := range ev.Problems {
		fmt.Fprintln(w, "PROBLEM:", p)
	}
	fmt.Fprintln(w, summary(ev))
	if !ev.Accepted {
		return 1
	}
	return 0
}

// conclude gathers every problem of the run and decides acceptance.
func conclude(ev *acceptance, exp *expectations) {
	ev.Problems = []string{}
	add := func(format string, args ...any) { ev.Problems = append(ev.Problems, fmt.Sprintf(format, args...)) }
	if ev.headerFail != nil {
		add("devices: %v", ev.headerFail)
	}
	if ev.Build.Commit == "unknown" {
		add("gpuaccept carries no build stamp: build it with make gpu-bins")
	}
	if ev.Visible == 0 {
		add("no CUDA device visible")
	}
	ev.Missing = missing(exp, ev.Suites)
	for _, m := range ev.Missing {
		add("suite %s (package %s) did not run: no bin/%s.test", m, pkgOf(exp, m), m)
	}
	for _, s := range ev.Suites {
		for _, p := range s.Problems {
			add("%s: %s", s.Name, p)
		}
	}
	ev.Accepted = len(ev.Problems) == 0
}

func pkgOf(exp *expectations, name string) string {
	e, _ := exp.find(name)
	return e.Package
}

func printSuite(w io.Writer, r suiteReport) {
	c := r.Counts
	fmt.Fprintf(w, "%-38s gpu %3d passed %2d deferred  cpu %3d passed  subtests %4d  failed %d  skipped %d  %6.1fs  exit %d\n",
		r.Name, c.GPUPassed, c.GPUDeferred, c.CPUPassed, c.Subtests, c.Failed, c.Skipped, r.Seconds, r.ExitCode)
	for _, p := range r.Problems {
		fmt.Fprintln(w, "   ", p)
	}
}

// summary is the last line: GPU-gated and CPU counts apart.
func summary(ev *acceptance) string {
	c := ev.Totals
	verdict := "ACCEPTED"
	if !ev.Accepted {
		verdict = fmt.Sprintf("NOT ACCEPTED (%d problems)", len(ev.Problems))
	}
	dirty := ""
	if ev.Build.Dirty {
		dirty = " (built from a dirty tree)"
	}
	return fmt.Sprintf("gpu-accept: %s: %d suites; GPU-gated tests %d passed, %d deferred (need more than the %d device(s) here); CPU tests %d passed; %d subtests; %d failed, %d skipped; build %s%s on %v",
		verdict, len(ev.Suites), c.GPUPassed, c.GPUDeferred, ev.Visible, c.CPUPassed, c.Subtests, c.Failed, c.Skipped, ev.Build.Short(), dirty, ev.Devices)
}

// printCensus prints the suite list the binaries support: their GPU-gated
// top-level tests by device need. It returns 1 when a suite failed.
func printCensus(w io.Writer, rs []suiteReport) int {
	list := expectations{Comment: "GPU-tier suites and the least number of GPU-gated top-level tests each must hold (gpuaccept -census bin/*.test counts them)."}
	rc := 0
	for _, r := range rs {
		pkg := "./" + strings.ReplaceAll(r.Name, "-", "/")
		if r.Name == "rayd" {
			pkg = "."
		}
		list.Suites = append(list.Suites, expectation{Name: r.Name, Package: pkg, MinGPU: r.Counts.GPUSingle, MinMulti: r.Counts.GPUMulti})
		if r.Counts.Failed > 0 || r.ExitCode != 0 {
			rc = 1
		}
	}
	b, _ := json.MarshalIndent(list, "", "  ")
	fmt.Fprintln(w, string(b))
	return rc
}
