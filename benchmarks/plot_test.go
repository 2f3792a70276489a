package benchmarks

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlotPNGAndSVG(t *testing.T) {
	historical, _ := loadHistorical(t)
	recs := []*Record{historical, liveRecord(), singleDeviceRecord()}
	dir := t.TempDir()

	png := filepath.Join(dir, "out", "speedup.png")
	require.NoError(t, Plot(png, recs))
	data, err := os.ReadFile(png)
	require.NoError(t, err)
	assert.Greater(t, len(data), 1000)
	assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")), "PNG magic")

	svg := filepath.Join(dir, "speedup.SVG")
	require.NoError(t, Plot(svg, recs[:1]))
	data, err = os.ReadFile(svg)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(data, []byte("<?xml")) || bytes.HasPrefix(data, []byte("<svg")))
	for _, want := range []string{
		"rayd bench: NVIDIA RTX A6000 x2", "speedup over one GPU", "batch (rays)", "batch (samples)",
		"ms fixed; transfer-bound", "no crossover", "crossover at about 1e+06 rays",
	} {
		assert.Contains(t, string(data), want)
	}
}

func TestPlotSyntheticOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.svg")
	require.NoError(t, Plot(path, []*Record{liveRecord()}))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "rayd bench: NVIDIA H200 x4")
	assert.Contains(t, string(data), "ms fixed; compute-bound")
}

func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	r := liveRecord()
	assert.Error(t, Plot(filepath.Join(dir, "x.pdf"), []*Record{r}))
	assert.Error(t, Plot(filepath.Join(dir, "x"), []*Record{r}))
	assert.Error(t, Plot(filepath.Join(dir, "x.png"), nil))
	assert.Error(t, Plot(filepath.Join(dir, "x.png"), []*Record{nil}))
	assert.ErrorIs(t, Plot(filepath.Join(dir, "x.png"), []*Record{singleDeviceRecord()}), ErrNothingToPlot)
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	assert.Error(t, Plot(filepath.Join(blocker, "x.png"), []*Record{r}))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing written but the blocker")

	// Degenerate rows (no speedup, no bandwidth, zero times, non-finite or
	// huge speedups) still plot beside a measured one; alone they are
	// nothing to plot.
	odd := singleDeviceRecord()
	odd.Configs["light"].Intersect.SingleMS = 0
	require.ErrorIs(t, Plot(filepath.Join(dir, "odd.png"), []*Record{odd}), ErrNothingToPlot)
	require.NoError(t, Plot(filepath.Join(dir, "odd.png"), []*Record{odd, liveRecord()}))
	wild := liveRecord()
	wild.Configs["compute"].Intersect.Speedup = ptr(math.Inf(1))
	wild.Configs["compute"].TraceReflections.Speedup = ptr(math.NaN())
	wild.Configs["compute"].IntersectOffload.Speedup = ptr(1e9)
	require.NoError(t, Plot(filepath.Join(dir, "wild.png"), []*Record{wild}))
}

func TestParseBatch(t *testing.T) {
	n, rays, err := ParseBatch("4194304 rays")
	require.NoError(t, err)
	assert.Equal(t, 4194304, n)
	assert.True(t, rays)
	n, rays, err = ParseBatch("8192 samples")
	require.NoError(t, err)
	assert.Equal(t, 8192, n)
	assert.False(t, rays)
	for _, bad := range []string{"", "rays", "0 rays", "-5 rays", "4M rays", "12 lanes", "12  rays"} {
		_, _, err := ParseBatch(bad)
		assert.Error(t, err, bad)
	}
}
