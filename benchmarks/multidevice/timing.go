package multidevice

import (
	"slices"

	"github.com/rayd-go/rayd/internal/benchhead"
)

// clock times calls with CUDA events on a stream of the first device after
// synchronizing every device (benchhead.Clock).
type clock = benchhead.Clock

func newClock(ordinals []int) (*clock, error) { return benchhead.NewClock(ordinals) }

// timed is one variant's rounds.
type timed struct {
	rounds []float64
}

func (t timed) min() float64 { return slices.Min(t.rounds) }

// interleaved runs every variant once per warm-up round, then times every
// variant once per round, in order, in the same round (spec §10.2); it
// returns each variant's rounds.
func interleaved(c *clock, warmup, repeat int, variants ...func() error) ([]timed, error) {
	rounds, err := c.Interleaved(warmup, repeat, variants...)
	if err != nil {
		return nil, err
	}
	out := make([]timed, len(rounds))
	for i, r := range rounds {
		out[i] = timed{rounds: r}
	}
	return out, nil
}
