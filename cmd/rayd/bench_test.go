package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/benchmarks"
)

// TestHelperBench is re-executed by TestBenchWithoutDriverRunsTheCPUReference
// with a library path that cannot exist; it is not a test on its own.
func TestHelperBench(t *testing.T) {
	if os.Getenv("RAYD_TEST_HELPER") != "bench" {
		return
	}
	os.Exit(run([]string{"bench", "-quiet", "-repeat", "1", "-warmup", "0", "-json", os.Getenv("RAYD_TEST_JSON")}, os.Stdout, os.Stderr))
}

// Without a driver `rayd bench` runs the CPU reference, says so, writes a
// record that validates, and exits 0 (the README's main command works
// anywhere).
func TestBenchWithoutDriverRunsTheCPUReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out", "cpu.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBench$")
	cmd.Env = append(os.Environ(), "RAYD_TEST_HELPER=bench", "RAYD_TEST_JSON="+path, "RAYD_LIBCUDA=/nonexistent/libcuda.so.1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	assert.Contains(t, stdout.String(), "ran the CPU REFERENCE")
	assert.Contains(t, stdout.String(), "| light | intersect | 16384 rays |")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, benchmarks.Validate(data))
	var rec benchmarks.Record
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Equal(t, "cpu", rec.Parameters.Backend)
	assert.Equal(t, "none", rec.Machine.CUDA)
	require.NotNil(t, rec.Configs["light"].AccumDfrDirect)
	assert.Positive(t, rec.Configs["light"].AccumDfrDirect.SingleMS)

	// The summary and the plot read it back.
	var out, errb bytes.Buffer
	png := filepath.Join(t.TempDir(), "p.png")
	require.Equal(t, 0, run([]string{"bench", "summarize", "-plot", png, path}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "| Row | min | median | max |")
	st, err := os.Stat(png)
	require.NoError(t, err)
	assert.Positive(t, st.Size())
}

// A small run of the benchmark wherever it runs (CPU reference here, the
// GPUs on a GPU machine): exit 0 and a record that validates.
func TestBenchSmallRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.json")
	var out, errb bytes.Buffer
	code := run([]string{"bench", "-quiet", "-config", "light", "-rays", "65536", "-accum-samples", "8192",
		"-repeat", "1", "-warmup", "0", "-calibration-repeats", "1", "-json", path}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	assert.Contains(t, out.String(), "| Configuration | Operation | Batch | 1 GPU |")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, benchmarks.Validate(data))
}

func TestBenchRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "-config", "heavy"},
		{"bench", "-devices", "0,x"},
		{"bench", "-calibration-mode", "guess"},
		{"bench", "summarize"},
		{"bench", "pin"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errb), "%v", args)
		assert.NotEmpty(t, errb.String(), "%v says why", args)
	}
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run([]string{"bench", "summarize", filepath.Join(t.TempDir(), "missing.json")}, &out, &errb))
}

func TestCalibrateCommandRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"calibrate", "-config", "heavy"},
		{"calibrate", "-devices", "a,b"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errb), "%v", args)
		assert.NotEmpty(t, errb.String())
	}
}

// TestHelperCalibrate is re-executed without a driver; not a test on its own.
func TestHelperCalibrate(t *testing.T) {
	if os.Getenv("RAYD_TEST_HELPER") != "calibrate" {
		return
	}
	os.Exit(run([]string{"calibrate", "-config", "light", "-rays", "4096"}, os.Stdout, os.Stderr))
}

// Without a driver `rayd calibrate` says why and exits 1: calibration needs
// a scene on two or more devices.
func TestCalibrateWithoutDriverFailsClearly(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCalibrate$")
	cmd.Env = append(os.Environ(), "RAYD_TEST_HELPER=calibrate", "RAYD_LIBCUDA=/nonexistent/libcuda.so.1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, stderr.String(), "calibration needs two or more devices")
}
