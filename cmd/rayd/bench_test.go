package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/benchmarks"
)

// Without a driver `rayd bench` runs the CPU reference, says so on stderr,
// prints the table, writes a record that validates, and exits 0 (the
// README's main command works anywhere).
func TestBenchWithoutDriverRunsTheCPUReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out", "cpu.json")
	stdout, stderr, code := runWithoutDriver(t, "bench", "-quiet", "-repeat", "1", "-warmup", "0", "-json", path)
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Contains(t, stderr, "no usable GPU")
	assert.Contains(t, stderr, "ran the CPU REFERENCE")
	assert.NotContains(t, stdout, "no usable GPU", "notices go to stderr")
	assert.Contains(t, stdout, "| light | intersect | 16384 rays |")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, benchmarks.Validate(data))
	var rec benchmarks.Record
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Equal(t, "cpu", rec.Parameters.Backend)
	assert.Equal(t, "none", rec.Machine.CUDA)
	require.NotNil(t, rec.Configs["light"].AccumDfrDirect)
	assert.Positive(t, rec.Configs["light"].AccumDfrDirect.SingleMS)

	// The summary reads it back; a CPU record has no speedup, so there is
	// nothing to plot and no plot is written.
	png := filepath.Join(t.TempDir(), "p.png")
	out, errb, code := runHere("bench", "summarize", path)
	require.Equal(t, 0, code, errb)
	assert.Contains(t, out, "| Row | min | median | max |")
	_, errb, code = runHere("bench", "summarize", "-plot", png, path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb, "nothing to plot")
	assert.NoFileExists(t, png)
}

// `rayd bench -json -` prints the JSON record alone on stdout: the table
// and every notice go to stderr (`rayd bench -json - | python3 -m
// json.tool` works).
func TestBenchJSONOnStdoutIsJSONOnly(t *testing.T) {
	stdout, stderr, code := runWithoutDriver(t, "bench", "-repeat", "1", "-warmup", "0", "-json", "-")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	var rec benchmarks.Record
	require.NoError(t, json.Unmarshal([]byte(stdout), &rec), "stdout must be the JSON record only:\n%s", stdout)
	require.NoError(t, benchmarks.Validate([]byte(stdout)))
	assert.Equal(t, "cpu", rec.Parameters.Backend)
	assert.Contains(t, stderr, "| light | intersect |", "the table goes to stderr")
	assert.Contains(t, stderr, "no usable GPU")
}

// The CPU fallback honours -rays, -accum-samples and -accum-only, and
// refuses with status 2 what it cannot honour without a GPU, before it
// runs anything.
func TestBenchCPUFallbackHonoursOrRefusesEveryFlag(t *testing.T) {
	stdout, stderr, code := runWithoutDriver(t, "bench", "-quiet", "-repeat", "1", "-warmup", "0",
		"-config", "light", "-rays", "2048", "-accum-samples", "1024", "-json", "-")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	var rec benchmarks.Record
	require.NoError(t, json.Unmarshal([]byte(stdout), &rec))
	assert.Equal(t, 2048, rec.Parameters.Rays)
	assert.Equal(t, 1024, rec.Parameters.AccumSamples)
	assert.Equal(t, "2048 rays", rec.Configs["light"].Intersect.Batch)
	assert.Equal(t, 1024, rec.Configs["light"].AccumDfrDirect.DirectSamples)

	stdout, stderr, code = runWithoutDriver(t, "bench", "-quiet", "-repeat", "1", "-warmup", "0", "-accum-only", "-accum-samples", "512", "-json", "-")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	rec = benchmarks.Record{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rec))
	assert.Nil(t, rec.Configs["light"].Intersect, "-accum-only")
	assert.True(t, rec.Parameters.AccumOnly)

	plot := filepath.Join(t.TempDir(), "speedup.png")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"-config", "compute"}, "-config compute"},
		{[]string{"-devices", "0,1"}, "-devices"},
		{[]string{"-calibration-mode", "rayd"}, "-calibration-mode"},
		{[]string{"-calibration-rays", "4096"}, "-calibration-rays"},
		{[]string{"-calibration-repeats", "2"}, "-calibration-repeats"},
		{[]string{"-plot", plot}, "-plot"},
	} {
		stdout, stderr, code := runWithoutDriver(t, append([]string{"bench", "-repeat", "1"}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, "the CPU reference cannot honour", "%v", c.args)
		assert.Contains(t, stderr, c.says, "%v", c.args)
		assert.Empty(t, stdout, "%v", c.args)
		assert.NotContains(t, stderr, "| light |", "%v: nothing ran", c.args)
	}
	assert.NoFileExists(t, plot)
}

// A small run of the benchmark wherever it runs (CPU reference here, the
// GPUs on a GPU machine): exit 0 and a record that validates.
func TestBenchSmallRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.json")
	out, errb, code := runHere("bench", "-quiet", "-config", "light", "-rays", "65536", "-accum-samples", "8192",
		"-repeat", "1", "-warmup", "0", "-json", path)
	require.Equal(t, 0, code, "stderr: %s", errb)
	assert.Contains(t, out, "| Configuration | Operation | Batch | 1 GPU |")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, benchmarks.Validate(data))
}

func TestBenchRuntimeFailuresExitOne(t *testing.T) {
	_, _, code := runHere("bench", "summarize", filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, 1, code)
}

// Without a driver `rayd calibrate` says why and exits 1: calibration needs
// a scene on two or more devices.
func TestCalibrateWithoutDriverFailsClearly(t *testing.T) {
	_, stderr, code := runWithoutDriver(t, "calibrate", "-config", "light", "-rays", "4096")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "calibration needs two or more devices")
}
