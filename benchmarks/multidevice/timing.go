package multidevice

import (
	"errors"
	"slices"

	"github.com/rayd-go/rayd/launch"
)

// clock times calls with CUDA events on a stream of the first device after
// synchronizing every device (cuCtxSynchronize on each primary context, so
// the scenes' own streams are drained too).
type clock struct {
	devs       []*launch.Device
	st         *launch.Stream
	start, end *launch.Event
}

func newClock(ordinals []int) (_ *clock, err error) {
	c := &clock{}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for _, o := range ordinals {
		d, err := launch.Open(o)
		if err != nil {
			return nil, err
		}
		c.devs = append(c.devs, d)
	}
	if c.st, err = c.devs[0].NewStream(); err != nil {
		return nil, err
	}
	if c.start, err = c.devs[0].NewEvent(true); err != nil {
		return nil, err
	}
	if c.end, err = c.devs[0].NewEvent(true); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *clock) sync() error {
	for _, d := range c.devs {
		if err := d.Synchronize(); err != nil {
			return err
		}
	}
	return nil
}

// ms runs fn once between two synchronizations and returns its time in
// milliseconds: start event, fn (which returns once its results are in
// place), end event.
func (c *clock) ms(fn func() error) (float64, error) {
	if err := c.sync(); err != nil {
		return 0, err
	}
	if err := c.start.Record(c.st); err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	if err := c.end.Record(c.st); err != nil {
		return 0, err
	}
	if err := c.end.Synchronize(); err != nil {
		return 0, err
	}
	if err := c.sync(); err != nil {
		return 0, err
	}
	ms, err := launch.Elapsed(c.start, c.end)
	return float64(ms), err
}

// Close releases the clock's stream, events and devices.
func (c *clock) Close() {
	if c.start != nil {
		_ = c.start.Close()
	}
	if c.end != nil {
		_ = c.end.Close()
	}
	if c.st != nil {
		_ = c.st.Close()
	}
	for _, d := range c.devs {
		_ = d.Close()
	}
}

// timed is one variant's rounds.
type timed struct {
	rounds []float64
}

func (t timed) min() float64 { return slices.Min(t.rounds) }

// interleaved runs every variant once per warm-up round, then times every
// variant once per round, in order, in the same round (spec §10.2); it
// returns each variant's rounds.
func (c *clock) interleaved(warmup, repeat int, variants ...func() error) ([]timed, error) {
	for range warmup {
		for _, v := range variants {
			if err := v(); err != nil {
				return nil, err
			}
		}
	}
	if err := c.sync(); err != nil {
		return nil, err
	}
	out := make([]timed, len(variants))
	for range repeat {
		for i, v := range variants {
			ms, err := c.ms(v)
			if err != nil {
				return nil, err
			}
			out[i].rounds = append(out[i].rounds, ms)
		}
	}
	if repeat == 0 {
		return nil, errors.New("multidevice: no timed round")
	}
	return out, nil
}
