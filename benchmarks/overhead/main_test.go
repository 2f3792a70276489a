package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/evidence"
	"github.com/rayd-go/rayd/internal/workload"
)

func newHeader() benchhead.Header {
	return benchhead.Header{Header: evidence.Header{Commit: "0123abcd", PTX: map[string]string{}, Devices: []string{}}}
}

func TestOptionsValidate(t *testing.T) {
	good := options{warmup: 3, lightRounds: 31, computeRounds: 11}
	require.NoError(t, good.validate())
	for _, tr := range []string{"peer-direct", "compact", "copy"} {
		o := good
		o.transfer = tr
		assert.NoError(t, o.validate(), tr)
	}
	for _, bad := range []options{
		{config: "heavy", lightRounds: 1, computeRounds: 1},
		{lightRounds: 0, computeRounds: 1},
		{lightRounds: 1, computeRounds: 1, warmup: -1},
		{lightRounds: 1, computeRounds: 1, ordinal: -1},
		{lightRounds: 1, computeRounds: 1, transfer: "nvlink"},
	} {
		assert.ErrorIs(t, bad.validate(), errUsage, "%+v", bad)
	}
}

// The rows run the configurations of `rayd bench`, not copies of them.
func TestConfigsAreTheBenchmarks(t *testing.T) {
	cs, err := configs("")
	require.NoError(t, err)
	assert.Equal(t, []workload.Config{workload.Light, workload.Compute}, cs)
	cs, err = configs("compute")
	require.NoError(t, err)
	assert.Equal(t, 1<<26, cs[0].AccumSamples)
	cs, err = configs("light")
	require.NoError(t, err)
	assert.Equal(t, 8192, cs[0].AccumSamples)
	assert.Equal(t, 1, cs[0].MaxBounces, "the light trace_reflections row is one bounce")
	assert.Equal(t, []string{opIntersect, opReflect, opVisible}, perRayOps("light"))
	assert.Equal(t, []string{opIntersect}, perRayOps("compute"))
}

func TestCountedPassesTheErrorAndCountsNothingWithoutTheDriver(t *testing.T) {
	boom := errors.New("boom")
	c, err := counted(func() error { return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, calls{}, c)
}

func TestSegmentEnds(t *testing.T) {
	assert.Equal(t, []float32{1, 2, 4, 0, 0, 0}, segmentEnds([]float32{1, 2, 3, 0, 0, -1}, []float32{0, 0, 1, 0, 0, 1}))
}

// The evidence file: the shared head at the top level, then the rows.
func TestWriteEvidence(t *testing.T) {
	rep := newReport(newHeader(), options{warmup: 2})
	r := row{Op: opIntersect, Config: "light", Rows: 8, Check: check{Pass: true}}
	r.setTimes([]float64{0.5}, []float64{0.52})
	r.judge()
	rep.add(r)
	path := filepath.Join(t.TempDir(), "sub", "overhead-1gpu.json")
	require.NoError(t, benchhead.WriteJSON(path, rep))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, k := range []string{`"commit": "0123abcd"`, `"dirty": false`, `"ptx_sha256": {}`, `"ptx_manifest_sha256"`,
		`"driver_version"`, `"devices": []`, `"date"`, `"mode": "same-device replicas [d, d] vs single device"`,
		`"weights": [`, `"statistic": "median of interleaved rounds after warm-up (minimum kept)"`,
		`"targets_missed": []`, `"failures": []`, `"rows": [`} {
		assert.Contains(t, string(b), k)
	}
	assert.Equal(t, byte('\n'), b[len(b)-1])
}
