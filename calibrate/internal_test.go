package calibrate

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMedianAndMinimum(t *testing.T) {
	require.Zero(t, median(nil))
	require.Zero(t, minimum(nil))
	x := []float64{3, 1, 2}
	require.Equal(t, 2.0, median(x))
	require.Equal(t, []float64{3, 1, 2}, x, "median sorts a copy")
	require.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	require.Equal(t, 1.0, minimum(x))
}

func TestZQuantile(t *testing.T) {
	require.InDelta(t, 1.959964, zQuantile(0.95), 1e-5)
	require.InDelta(t, 2.575829, zQuantile(0.99), 1e-5)
}

// The Hodges–Lehmann interval: a clean shift is read exactly, too few
// samples stay unbounded, overlapping samples stay undecided.
func TestCompare(t *testing.T) {
	master := []float64{10, 10, 10, 10, 10, 10}
	c := compare(1, []float64{9, 9, 9, 9, 9, 9}, master, 0.99)
	require.True(t, c.Bounded)
	require.Equal(t, Faster, c.Verdict)
	require.InDelta(t, -0.1, c.Shift, 1e-12)
	require.InDelta(t, -0.1, c.High, 1e-12)
	require.Equal(t, 6, c.Samples)

	c = compare(2, []float64{11, 11, 11}, []float64{10, 10, 10}, 0.99)
	require.False(t, c.Bounded, "3 against 3 cannot reach 99%%")
	require.Equal(t, Undecided, c.Verdict)
	require.InDelta(t, 0.1, c.Shift, 1e-12)

	c = compare(3, []float64{11, 11, 11, 11, 11}, master, 0.99)
	require.Equal(t, Slower, c.Verdict)

	c = compare(4, []float64{9.9, 10.2, 10.1, 9.8, 10.3, 10.0}, []float64{10.1, 9.9, 10.2, 10.0, 9.8, 10.3}, 0.99)
	require.True(t, c.Bounded)
	require.Equal(t, Undecided, c.Verdict)
	require.Less(t, c.Low, 0.0)
	require.Greater(t, c.High, 0.0)

	require.Equal(t, Undecided, compare(5, nil, master, 0.99).Verdict)
	require.False(t, math.IsNaN(compare(6, []float64{0, 0, 0, 0}, master, 0.99).Shift), "zero times are clamped")
}

func TestPickTolerant(t *testing.T) {
	// RayD's tie-break: the first rung within 3% of the fastest.
	require.Equal(t, 1, pickTolerant([]float64{2, 1.02, 1.01, 1}, nil))
	require.Equal(t, 3, pickTolerant([]float64{2, 1.04, 1.05, 1}, nil))
	require.Equal(t, 2, pickTolerant([]float64{2, 1.02, 1.01, 1}, func(k int) bool { return k == 2 }))
	require.Equal(t, -1, pickTolerant([]float64{1}, func(int) bool { return false }))
}

func TestLadder(t *testing.T) {
	require.Equal(t, [][]float64{{1, 1}, {1, 0.5}, {1, 0.25}, {1, 0.1}, {1, 0}}, Ladder([]float64{1, 1}))
	require.Equal(t, [][]float64{{2, 0}}, Ladder([]float64{2, 0}), "duplicates are dropped")
	require.Equal(t, [][]float64{{0, 2}, {0, 1}, {0, 0.5}, {0, 0.2}}, Ladder([]float64{0, 2}), "a zero rung is dropped")
}

// Progress is reported through Options.Progress: monotone counts, the
// stages by name, one final update with Finished set; nil is quiet.
func TestProgress(t *testing.T) {
	probe := ProbeFuncs{
		Replica: func(context.Context, int) (time.Duration, error) { return time.Millisecond, nil },
		Dispatch: func(_ context.Context, w []float64) (time.Duration, error) {
			return time.Duration(float64(time.Millisecond) * (0.5 + w[1]/4)), nil
		},
	}
	run := func(report func(ProgressUpdate)) *Record {
		r := &run{ctx: t.Context(), probe: probe, devices: []int{0, 1}}
		var err error
		r.cfg, err = resolve(probe, Options{Operation: "visible", Progress: report})
		require.NoError(t, err)
		rec, err := r.calibrate()
		require.NoError(t, err)
		return rec
	}
	run(nil) // quiet: nothing to call

	var got []ProgressUpdate
	rec := run(func(u ProgressUpdate) { got = append(got, u) })
	require.NotEmpty(t, got)
	stages := map[string]bool{}
	for i, u := range got {
		require.Equal(t, "visible", u.Operation)
		require.LessOrEqual(t, u.Done, u.Total, "update %d", i)
		require.Equal(t, i == len(got)-1, u.Finished, "update %d", i)
		if i > 0 {
			require.GreaterOrEqual(t, u.Done, got[i-1].Done, "counts never go back")
		}
		stages[u.Stage] = true
	}
	require.True(t, stages["throughput visible"] && stages["ladder visible"], "%v", stages)
	last := got[len(got)-1]
	require.Equal(t, last.Done, last.Total)
	require.Positive(t, last.Done)
	require.Equal(t, []float64{1, 1}, rec.ThroughputWeights)
	require.Equal(t, 4, rec.Chosen, "sharding loses here")
}
