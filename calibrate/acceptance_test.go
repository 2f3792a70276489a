package calibrate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/calibrate"
)

var modes = []calibrate.Mode{calibrate.ModeNoiseAware, calibrate.ModeRayD}

// calibrateModel runs Calibrate with a model probe on a fresh layer and
// returns the record and the layer. Devices of different speeds are given
// distinct identities (they are different models, not contended twins).
func calibrateModel(t *testing.T, m *model, o calibrate.Options) (*calibrate.Record, *fakeLayer) {
	t.Helper()
	l := newLayer(m.count())
	if o.Rows == 0 {
		o.Rows = m.rows
	}
	if len(m.speed) > 0 && o.Identities == nil {
		for i := range m.count() {
			o.Identities = append(o.Identities, string(rune('A'+i)))
		}
	}
	rec, err := calibrate.Calibrate(t.Context(), l, m, o)
	require.NoError(t, err)
	require.Equal(t, []string{rec.Operation}, l.stores, "one store, under the exact key")
	require.Equal(t, rec.Weights, l.weights[rec.Operation])
	return rec, l
}

// Light intersect (0.31 ns/ray of compute against 2.04 ns/ray of transfer)
// is transfer-bound: every mode, quiet or noisy, chooses the master alone.
func TestLightIntersectChoosesTheMasterAlone(t *testing.T) {
	for _, mode := range modes {
		for seed := range uint64(5) {
			m := lightIntersect()
			if seed > 0 {
				m.withNoise(seed, jitter(0.03))
			}
			rec, _ := calibrateModel(t, m, calibrate.Options{Operation: "intersect_full", Mode: mode})
			require.Equal(t, 0.0, rec.Weights[1], "%s seed %d:\n%s", mode, seed, rec)
			require.Greater(t, rec.Weights[0], 0.0)
			require.False(t, rec.Sharded())
			require.Equal(t, rec.MasterOnly(), rec.Chosen)
			require.Less(t, rec.MarginPct, -10.0, "sharding loses by a wide margin")
			require.False(t, rec.NearCrossover)
			require.False(t, rec.Contended())
		}
	}
}

// Compute intersect (4.55 ns/ray against 2.04 ns/ray) and 4-bounce
// reflections (12.71 ns/ray against 1.22) are compute-bound on identical
// devices: the even split, in every mode, under noise too.
func TestComputeBoundOperationsSplitEvenly(t *testing.T) {
	for _, tc := range []struct {
		op string
		m  func() *model
	}{{"intersect_full", computeIntersect}, {"trace_reflections:4", computeReflections4}} {
		for _, mode := range modes {
			for seed := range uint64(5) {
				m := tc.m()
				if seed > 0 {
					m.withNoise(seed, jitter(0.03))
				}
				rec, _ := calibrateModel(t, m, calibrate.Options{Operation: tc.op, Mode: mode})
				require.True(t, rec.Sharded(), "%s %s seed %d:\n%s", tc.op, mode, seed, rec)
				require.Equal(t, 0, rec.Chosen)
				require.InDelta(t, 1, rec.Weights[1]/rec.Weights[0], 0.03, "%s %s seed %d:\n%s", tc.op, mode, seed, rec)
				require.Greater(t, rec.MarginPct, 25.0)
				require.False(t, rec.NearCrossover)
			}
		}
	}
}

// A device made 30% slower (speed 0.7) is weighted near its speed on a
// compute-bound operation.
func TestASlowerDeviceIsWeightedNearItsSpeed(t *testing.T) {
	for _, mode := range modes {
		for seed := range uint64(5) {
			m := computeIntersect()
			m.speed = []float64{1, 0.7}
			if seed > 0 {
				m.withNoise(seed, jitter(0.02))
			}
			rec, _ := calibrateModel(t, m, calibrate.Options{Operation: "intersect_full", Mode: mode})
			require.InDelta(t, 0.7, rec.Weights[1]/rec.Weights[0], 0.03, "%s seed %d:\n%s", mode, seed, rec)
			require.InDelta(t, 0.7, rec.ThroughputWeights[1]/rec.ThroughputWeights[0], 0.03)
			require.InDelta(t, 2, rec.ThroughputWeights[0]+rec.ThroughputWeights[1], 1e-9)
			require.False(t, rec.Contended(), "different models are not contention")
		}
	}
}

// Three devices, the last one slow: relative standing among remotes is kept
// on every rung, and the ladder ends with the master alone.
func TestTheLadderKeepsTheRemotesRelativeStanding(t *testing.T) {
	m := computeReflections4()
	m.speed = []float64{1, 1, 0.5}
	rec, _ := calibrateModel(t, m, calibrate.Options{Operation: "trace_reflections:4", Identities: []string{"A", "A", "B"}})
	require.Len(t, rec.Candidates, 5)
	for k, w := range rec.Candidates {
		require.Equal(t, rec.ThroughputWeights[0], w[0], "the master keeps its weight")
		require.InDelta(t, calibrate.Shares()[k]*rec.ThroughputWeights[2], w[2], 1e-12)
		if k < 4 {
			require.InDelta(t, 2, w[1]/w[2], 1e-6)
		}
	}
	require.Equal(t, []float64{rec.ThroughputWeights[0], 0, 0}, rec.Candidates[4])
	require.Equal(t, 0, rec.Chosen)
	require.InDelta(t, 0.5, rec.Weights[2]/rec.Weights[0], 0.01)
	require.False(t, rec.Contended())
}

// Calibration stores its weights once, under the exact key, and leaves
// every other key alone; the chosen weights are not renormalized.
func TestResultsAreStoredUnderTheExactKey(t *testing.T) {
	l := newLayer(2)
	l.weights["trace_reflections"] = []float64{3, 1}
	l.weights["trace_reflections:4"] = []float64{5, 1}
	m := lightIntersect()
	m.rowBytes = 60 // transfer-bound 4-bounce reflections: a lone master weight
	rec, err := calibrate.Calibrate(t.Context(), l, m, calibrate.Options{Operation: "trace_reflections:4", Rows: m.rows})
	require.NoError(t, err)
	require.Equal(t, []string{"trace_reflections:4"}, l.stores)
	require.Equal(t, rec.Weights, l.weightsFor("trace_reflections:4"))
	require.Equal(t, []float64{3, 1}, l.weightsFor("trace_reflections"))
	require.Equal(t, []float64{1, 1}, l.weightsFor("intersect_full"))
	require.Equal(t, rec.ThroughputWeights[0], rec.Weights[0], "not renormalized")
	require.Zero(t, rec.Weights[1])
}

// SkipRefine keeps the throughput weights and records no ladder.
func TestSkipRefineKeepsTheThroughputWeights(t *testing.T) {
	m := lightIntersect()
	m.speed = []float64{1, 0.5}
	rec, l := calibrateModel(t, m, calibrate.Options{Operation: "intersect_full", SkipRefine: true})
	require.Empty(t, rec.Candidates)
	require.Equal(t, -1, rec.Chosen)
	require.Equal(t, rec.ThroughputWeights, rec.Weights)
	require.InDelta(t, 0.5, rec.Weights[1]/rec.Weights[0], 1e-9)
	require.Zero(t, m.dispatchCalls)
	require.Equal(t, 2*(calibrate.DefaultWarmUp+calibrate.DefaultRepeats), m.replicaCalls)
	require.Equal(t, rec.Weights, l.weightsFor("intersect_full"))
}
