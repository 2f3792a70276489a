package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/benchmarks/multidevice"
	"github.com/rayd-go/rayd/calibrate"
)

func TestIsTerminal(t *testing.T) {
	assert.False(t, isTerminal(&bytes.Buffer{}))
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f))
	assert.False(t, isTerminal((*os.File)(nil)))
}

// Off a terminal calibration is quiet: no callback at all.
func TestCalibrationProgressIsQuietOffATerminal(t *testing.T) {
	assert.Nil(t, calibrationProgress(&bytes.Buffer{}))
}

// On a terminal the updates draw a bar with the stage, the count and an
// estimate of the time left.
func TestProgressBarsOnATerminal(t *testing.T) {
	saved := isTerminal
	t.Cleanup(func() { isTerminal = saved })
	isTerminal = func(io.Writer) bool { return true }

	var w bytes.Buffer
	report := calibrationProgress(&w)
	require.NotNil(t, report)
	for i := range 5 {
		report(calibrate.ProgressUpdate{Operation: "intersect", Stage: "ladder intersect", Done: i, Total: 8})
	}
	report(calibrate.ProgressUpdate{Operation: "intersect", Stage: "ladder intersect", Done: 8, Total: 8, Finished: true})
	assert.Contains(t, w.String(), "ladder intersect")
	assert.Contains(t, w.String(), "/8")
	assert.Regexp(t, `\[\d+s:\d+s\]`, w.String(), "elapsed and time left")

	var bw bytes.Buffer
	b := &benchBar{w: &bw}
	b.stageStarted(multidevice.Stage{Done: 1, Total: 4, What: "light: intersect"})
	b.calibration(calibrate.ProgressUpdate{Stage: "throughput intersect", Done: 2, Total: 10})
	b.stageStarted(multidevice.Stage{Done: 2, Total: 4, What: "light: trace_reflections(1)"})
	b.finish()
	assert.Contains(t, bw.String(), "light: intersect")
	assert.Contains(t, bw.String(), "/4")
}
