package calibrate_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/calibrate"
)

// tally counts the outcomes of repeated calibrations.
type tally struct {
	trials, sharded, losing, near, capped int
	worst                                 float64 // worst re-timed slowdown shipped, vs the master alone
}

// trials calibrates a fresh seeded model trials times on one layer and
// re-times each shipped split without noise against the master alone.
func trials(t *testing.T, mode calibrate.Mode, n int, build func(seed uint64) *model) tally {
	t.Helper()
	l := newLayer(2)
	var out tally
	for seed := range uint64(n) {
		m := build(seed + 1)
		rec, err := calibrate.Calibrate(t.Context(), l, m, calibrate.Options{
			Operation: "trace_reflections:1", Rows: m.rows, Mode: mode})
		require.NoError(t, err)
		out.trials++
		master := m.truth([]float64{1, 0})
		slowdown := float64(m.truth(rec.Weights))/float64(master) - 1
		if rec.Sharded() {
			out.sharded++
			out.worst = max(out.worst, slowdown)
		}
		if slowdown > 0.02 {
			out.losing++
		}
		if rec.NearCrossover {
			out.near++
		}
		if rec.Capped {
			out.capped++
		}
	}
	return out
}

// The near-crossover case of seed §5.4: light 1-bounce trace_reflections
// (0.27 ns/ray of compute against 0.67 ns/ray of transfer), 4.19M rays,
// its 1/4 share a true 2.6% slower than the master alone, measured with a
// few percent of noise. RayD's tie-break ships that losing split in a
// large share of the calibrations; the noise-aware mode never ships a
// split that re-times more than 2% slower than the master alone, and
// labels the case NEAR-CROSSOVER.
func TestNearCrossoverNeverShipsALosingSplit(t *testing.T) {
	const n = 300
	m := lightReflections1()
	quarter := float64(m.truth([]float64{1, 0.25}))/float64(m.truth([]float64{1, 0})) - 1
	require.InDelta(t, 0.026, quarter, 0.004, "the model puts the 1/4 share inside RayD's 3%% band")
	type scenario struct {
		name  string
		build func(seed uint64) *model
	}
	var scenarios []scenario
	for _, sigma := range []float64{0.03, 0.06, 0.10} {
		scenarios = append(scenarios, scenario{fmt.Sprintf("jitter σ %.0f%%", sigma*100), func(seed uint64) *model {
			return lightReflections1().withNoise(seed, jitter(sigma))
		}})
	}
	// A neighbour on the master during part of the ladder: the master-only
	// rung and the master's shard of every rung slow down together.
	scenarios = append(scenarios, scenario{"jitter σ 3% + a neighbour on cuda:0 for 30 ladder runs", func(seed uint64) *model {
		m := lightReflections1().withNoise(seed, jitter(0.03))
		m.contendDevice, m.contendFactor, m.contendFrom, m.contendTo = 0, 1.3, 20, 50
		return m
	}})
	for _, sc := range scenarios {
		aware := trials(t, calibrate.ModeNoiseAware, n, sc.build)
		rayd := trials(t, calibrate.ModeRayD, n, sc.build)
		t.Logf("%s, 1/4 share %+.1f%% vs master-only, %d seeded calibrations per mode:", sc.name, quarter*100, n)
		t.Logf("  noise-aware: shipped a split %3d times, one re-timing >2%% slower %3d times (worst %+.1f%%); NEAR-CROSSOVER %3d, capped %3d",
			aware.sharded, aware.losing, aware.worst*100, aware.near, aware.capped)
		t.Logf("  rayd:        shipped a split %3d times, one re-timing >2%% slower %3d times (worst %+.1f%%); NEAR-CROSSOVER %3d",
			rayd.sharded, rayd.losing, rayd.worst*100, rayd.near)
		require.Zero(t, aware.losing, "%s: the noise-aware mode shipped a losing split", sc.name)
		require.Greater(t, rayd.losing, n/5, "%s: RayD's tie-break should ship the losing split often (its coin flip)", sc.name)
		require.Less(t, rayd.losing, n, "%s: ... but not always: it is a coin flip", sc.name)
		require.Equal(t, aware.capped, aware.near, "%s: an undecided margin is labelled", sc.name)
	}
}

// The noise-aware mode still shards when sharding wins beyond the noise:
// every noisy calibration of compute intersect ships the even split.
func TestNoiseAwareStillShardsAClearWin(t *testing.T) {
	l := newLayer(2)
	for seed := range uint64(100) {
		m := computeIntersect().withNoise(seed+1, jitter(0.05))
		rec, err := calibrate.Calibrate(t.Context(), l, m, calibrate.Options{Operation: "intersect_full", Rows: m.rows})
		require.NoError(t, err)
		require.Equal(t, 0, rec.Chosen, "seed %d:\n%s", seed, rec)
		require.False(t, rec.Capped)
		require.LessOrEqual(t, rec.Rounds, 5, "a clear win is settled in a few rounds")
	}
}
