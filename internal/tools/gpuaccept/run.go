package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rayd-go/rayd/internal/buildinfo"
)

// runOptions say how a suite binary is run.
type runOptions struct {
	timeout time.Duration
	census  bool     // leave RAYD_REQUIRE_GPU unset: count, do not accept
	args    []string // extra arguments (the harness's own tests select tests)
}

// suiteName is the suite a binary holds: its file name without ".test".
func suiteName(bin string) string {
	return strings.TrimSuffix(filepath.Base(bin), ".test")
}

// runSuite runs one test binary with -test.v=test2json in a fresh
// directory (the tests must not depend on where they run) and parses its
// output. The returned report has the name, build, exit code and time;
// judge fills in the rest.
func runSuite(bin string, o runOptions) (suiteReport, *stream) {
	r := suiteReport{Name: suiteName(bin), ExitCode: -1}
	fail := func(err error) (suiteReport, *stream) {
		s := &stream{byName: map[string]*testRecord{}, tail: []string{err.Error()}}
		return r, s
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return fail(err)
	}
	if r.Build, err = buildinfo.ReadFile(abs); err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "gpuaccept-"+r.Name+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	args := append([]string{"-test.v=test2json", "-test.count=1", "-test.timeout=" + o.timeout.String()}, o.args...)
	cmd := exec.Command(abs, args...)
	cmd.Dir = dir
	cmd.Env = suiteEnv(os.Environ(), o.census)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	t0 := time.Now()
	err = cmd.Run()
	r.Seconds = time.Since(t0).Seconds()
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.ExitCode = 0
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
	default:
		return fail(err)
	}
	s, err := parseStream(&buf)
	if err != nil {
		s.tail = append(s.tail, err.Error())
	}
	return r, s
}

// suiteEnv is the environment of a suite: skipping forbidden (unless
// counting), NVLink multicast off.
func suiteEnv(base []string, census bool) []string {
	var env []string
	for _, kv := range base {
		if strings.HasPrefix(kv, "RAYD_REQUIRE_GPU=") || strings.HasPrefix(kv, "NCCL_NVLS_ENABLE=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "NCCL_NVLS_ENABLE=0")
	if !census {
		env = append(env, "RAYD_REQUIRE_GPU=1")
	}
	return env
}
