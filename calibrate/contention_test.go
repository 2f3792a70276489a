package calibrate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/calibrate"
)

// A neighbour on cuda:1 for the whole calibration (seed §5.1: 30.1 ms
// against 17.0 ms on identical hardware): both modes report CONTENDED; the
// noise-aware mode re-measured first.
func TestAPersistentNeighbourIsReportedContended(t *testing.T) {
	for _, mode := range modes {
		m := computeIntersect()
		m.contendDevice, m.contendFactor, m.contendFrom, m.contendTo = 1, 30.1/17.0, 0, 1<<30
		rec, _ := calibrateModel(t, m, calibrate.Options{Operation: "intersect_full", Mode: mode})
		require.True(t, rec.Contended(), "%s:\n%s", mode, rec)
		require.Len(t, rec.Contention, 1)
		c := rec.Contention[0]
		require.Equal(t, 1, c.Device)
		require.Equal(t, 0, c.Peer)
		require.InDelta(t, 30.1/17.0, c.Seconds/c.PeerSeconds, 1e-6)
		require.Contains(t, rec.String(), "CONTENDED: cuda:1 took")
		if mode == calibrate.ModeNoiseAware {
			require.Equal(t, []int{0, 1}, rec.Remeasured)
			require.Len(t, rec.Samples[1], calibrate.DefaultRepeats+3)
		} else {
			require.Empty(t, rec.Remeasured)
			require.Len(t, rec.Samples[1], calibrate.DefaultRepeats)
		}
		require.InDelta(t, 17.0/30.1, rec.ThroughputWeights[1]/rec.ThroughputWeights[0], 0.01,
			"the weights describe the machine as measured")
	}
}

// A neighbour on cuda:1 for the throughput stage only: RayD's calibration
// weights the busy device down (seed §5.1: 0.72) and ships that split; the
// noise-aware mode re-measures, finds the devices agree and splits evenly.
func TestATransientNeighbourIsRemeasured(t *testing.T) {
	stage1 := 2 * (calibrate.DefaultWarmUp + calibrate.DefaultRepeats)
	for _, mode := range modes {
		m := computeIntersect().withNoise(7, jitter(0.01))
		m.contendDevice, m.contendFactor, m.contendFrom, m.contendTo = 1, 30.1/17.0, 0, stage1
		rec, _ := calibrateModel(t, m, calibrate.Options{Operation: "intersect_full", Mode: mode})
		ratio := rec.Weights[1] / rec.Weights[0]
		if mode == calibrate.ModeRayD {
			require.True(t, rec.Contended(), "\n%s", rec)
			require.Less(t, ratio, 0.6, "the busy device was weighted down")
			continue
		}
		require.False(t, rec.Contended(), "\n%s", rec)
		require.Equal(t, []int{0, 1}, rec.Remeasured)
		require.InDelta(t, 1, ratio, 0.03, "\n%s", rec)
		require.Contains(t, rec.String(), "re-measured cuda:0, cuda:1")
	}
}

// Run-to-run noise alone is not contention.
func TestNoiseAloneIsNotContention(t *testing.T) {
	l := newLayer(2)
	flagged := 0
	for seed := range uint64(100) {
		m := computeIntersect().withNoise(seed+1, jitter(0.03))
		rec, err := calibrate.Calibrate(t.Context(), l, m, calibrate.Options{Operation: "intersect_full", Rows: m.rows})
		require.NoError(t, err)
		if rec.Contended() {
			flagged++
		}
	}
	require.Zero(t, flagged)
}

// Only devices of one identity are compared: with identities naming two
// models, the slow model is not contention, a busy twin is.
func TestContentionComparesIdenticalDevicesOnly(t *testing.T) {
	ids := []string{"A (sm_90)", "A (sm_90)", "B (sm_86)"}
	m := computeReflections4()
	m.speed = []float64{1, 1, 0.5}
	rec, _ := calibrateModel(t, m, calibrate.Options{Operation: "trace_reflections:4", Identities: ids})
	require.False(t, rec.Contended(), "\n%s", rec)
	require.Empty(t, rec.Remeasured)

	m = computeReflections4()
	m.speed = []float64{1, 1, 0.5}
	m.contendDevice, m.contendFactor, m.contendTo = 0, 1.5, 1<<30
	rec, _ = calibrateModel(t, m, calibrate.Options{Operation: "trace_reflections:4", Identities: ids})
	require.Len(t, rec.Contention, 1, "\n%s", rec)
	require.Equal(t, 0, rec.Contention[0].Device)
	require.Equal(t, 1, rec.Contention[0].Peer)
	require.Equal(t, []int{0, 1}, rec.Remeasured)
	require.Contains(t, rec.String(), "CONTENDED: cuda:0")

	// Without identities every device is taken for identical.
	m = computeReflections4()
	m.speed = []float64{1, 1, 0.5}
	rec, err := calibrate.Calibrate(t.Context(), newLayer(3), m, calibrate.Options{Operation: "trace_reflections:4"})
	require.NoError(t, err)
	require.Len(t, rec.Contention, 1)
	require.Equal(t, 2, rec.Contention[0].Device)
}
