package benchhead_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/benchhead"
)

func TestSummarizeKeepsTheRoundsInOrder(t *testing.T) {
	rounds := []float64{3, 1, 2, 5}
	s := benchhead.Summarize(rounds)
	assert.Equal(t, 3.0, s.Median)
	assert.Equal(t, 1.0, s.Min)
	assert.Equal(t, []float64{3, 1, 2, 5}, s.Rounds)
}

func ExampleSummarize() {
	s := benchhead.Summarize([]float64{0.52, 0.49, 0.50})
	fmt.Println(s.Median, s.Min)
	// Output: 0.5 0.49
}

func TestClockNeedsADevice(t *testing.T) {
	c, err := benchhead.NewClock(nil)
	assert.Error(t, err)
	assert.Nil(t, c)
}

// TestInterleaveOrdersWarmUpsAndRounds: warm-up rounds run every variant
// in order, then sync, then every timed round times each variant once, in
// order; no timed round and a failing variant are errors.
func TestInterleaveOrdersWarmUpsAndRounds(t *testing.T) {
	var log []string
	v := func(name string) func() error { return func() error { log = append(log, name); return nil } }
	sync := func() error { log = append(log, "sync"); return nil }
	ms := 0.0
	timeOne := func(fn func() error) (float64, error) {
		log = append(log, "[")
		err := fn()
		ms++
		return ms, err
	}
	out, err := benchhead.Interleave(2, 2, sync, timeOne, v("a"), v("b"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "a", "b", "sync", "[", "a", "[", "b", "[", "a", "[", "b"}, log)
	assert.Equal(t, [][]float64{{1, 3}, {2, 4}}, out)
	_, err = benchhead.Interleave(1, 0, sync, timeOne, v("a"))
	assert.Error(t, err)
	boom := errors.New("boom")
	_, err = benchhead.Interleave(0, 1, sync, timeOne, func() error { return boom })
	assert.ErrorIs(t, err, boom)
}

// TestStreamTimerClosesWithoutEvents: a timer that never timed anything
// holds no event, and closing it (twice) is not an error.
func TestStreamTimerClosesWithoutEvents(t *testing.T) {
	var clk benchhead.StreamTimer
	assert.NoError(t, clk.Close())
	assert.NoError(t, clk.Close())
}
