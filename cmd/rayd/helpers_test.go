package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHelperRun is re-executed by runWithoutDriver with the command line in
// RAYD_TEST_ARGS; it is not a test on its own.
func TestHelperRun(t *testing.T) {
	args := os.Getenv("RAYD_TEST_ARGS")
	if args == "" {
		return // only meaningful as the re-executed helper
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// runWithoutDriver runs `rayd args...` in a child process whose libcuda
// path cannot exist, as on a machine without an NVIDIA driver, and returns
// its stdout, stderr and exit status.
func runWithoutDriver(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRun$")
	cmd.Env = append(os.Environ(), "RAYD_TEST_ARGS="+strings.Join(args, "\x1f"), "RAYD_LIBCUDA=/nonexistent/libcuda.so.1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errb.String(), 0
}

// runHere runs `rayd args...` in this process.
func runHere(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}
