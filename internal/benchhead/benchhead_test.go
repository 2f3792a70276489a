package benchhead_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

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
