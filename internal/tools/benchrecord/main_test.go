package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const printed = `goos: linux
goarch: amd64
pkg: github.com/rayd-go/rayd/accel
cpu: Intel(R) Xeon(R) Processor
BenchmarkTLASBuilderReused/serial-16         	     500	    490394 ns/op	     147 B/op	       1 allocs/op
BenchmarkInstanceUpdateHost/stage-device-16  	     500	     44483 ns/op	       0 B/op	       0 allocs/op
BenchmarkGPUTLASBuild-16                     	     500	    106859 ns/op
PASS
`

// TestParseKeepsPrintedUnits: every result with its name (sub-benchmarks
// kept, GOMAXPROCS apart), iterations, ns/op as printed and the other
// units; the configuration lines.
func TestParseKeepsPrintedUnits(t *testing.T) {
	cfg, rs, err := parse([]byte(printed))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"goos": "linux", "goarch": "amd64", "pkg": "github.com/rayd-go/rayd/accel",
		"cpu": "Intel(R) Xeon(R) Processor"}, cfg)
	require.Len(t, rs, 3)
	assert.Equal(t, result{Name: "BenchmarkTLASBuilderReused/serial", Procs: 16, Iterations: 500, NsPerOp: 490394,
		Other: map[string]float64{"B/op": 147, "allocs/op": 1}}, rs[0])
	assert.Equal(t, "BenchmarkInstanceUpdateHost/stage-device", rs[1].Name)
	assert.Equal(t, result{Name: "BenchmarkGPUTLASBuild", Procs: 16, Iterations: 500, NsPerOp: 106859}, rs[2])
}

// TestParseRefusesIncompleteRuns: a skipped or failed benchmark, a failed
// package, a panic or a run without results is refused.
func TestParseRefusesIncompleteRuns(t *testing.T) {
	for _, text := range []string{
		printed + "--- SKIP: BenchmarkGPUTLASBuild\n    no GPU\n",
		"--- FAIL: BenchmarkGPUTLASBuild\n" + printed,
		printed + "FAIL\tgithub.com/rayd-go/rayd/accel\t1.0s\n",
		printed + "panic: boom\n",
		"goos: linux\nPASS\n",
	} {
		_, _, err := parse([]byte(text))
		assert.Error(t, err, text)
	}
}

// TestRunNeedsCommandAndOut: both flags are required, and a refused run
// writes nothing (it fails before the device is described).
func TestRunNeedsCommandAndOut(t *testing.T) {
	out := t.TempDir() + "/r.json"
	assert.ErrorContains(t, run(bytes.NewBufferString(printed), &bytes.Buffer{}, 0, "", "", out), "required")
	assert.Error(t, run(bytes.NewBufferString("PASS\n"), &bytes.Buffer{}, 0, "x", "", out))
	assert.NoFileExists(t, out)
}
