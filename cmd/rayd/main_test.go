package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gputest"
)

// TestHelperInfo is re-executed by TestInfoWithoutDriverFailsClearly with a
// library path that cannot exist; it is not a test on its own.
func TestHelperInfo(t *testing.T) {
	if os.Getenv("RAYD_TEST_HELPER") != "info" {
		return // only meaningful as the re-executed helper
	}
	os.Exit(run([]string{"info"}, os.Stdout, os.Stderr))
}

func TestInfoWithoutDriverFailsClearly(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperInfo$")
	cmd.Env = append(os.Environ(), "RAYD_TEST_HELPER=info", "RAYD_LIBCUDA=/nonexistent/libcuda.so.1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, stderr.String(), "libcuda: cannot load (set RAYD_LIBCUDA to its path)")
	assert.Contains(t, stderr.String(), "/nonexistent/libcuda.so.1")
}

func TestInfoOnGPU(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	var out, errb bytes.Buffer
	code := run([]string{"info"}, &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "devices: ")
	assert.Contains(t, out.String(), "cuda:0")
	if len(ords) > 1 {
		assert.Contains(t, out.String(), "peer access")
	}
	t.Log("\n" + out.String())
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run(nil, &out, &errb))
	assert.Equal(t, 2, run([]string{"frobnicate"}, &out, &errb))
	assert.Equal(t, 0, run([]string{"help"}, &out, &errb))
}

func TestDemoOnTheCPUBackend(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"demo", "-rays", "2000", "-backend", "cpu"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "traced on the CPU REFERENCE")
	assert.Contains(t, out.String(), "hits: ")
	assert.Equal(t, 2, run([]string{"demo", "-config", "nope"}, &out, &errb))
	assert.Equal(t, 2, run([]string{"demo", "-rays", "0"}, &out, &errb))
	assert.Equal(t, 1, run([]string{"demo", "-backend", "vulkan"}, &out, &errb))
}

func TestDemoOnGPU(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	var out, errb bytes.Buffer
	code := run([]string{"demo", "-rays", "100000", "-backend", "cuda"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "traced on CUDA device 0")
	t.Log("\n" + out.String())
}
