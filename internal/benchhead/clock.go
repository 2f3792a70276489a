package benchhead

import (
	"errors"

	"github.com/rayd-go/rayd/launch"
)

// Clock times calls with CUDA events on a stream of the first device after
// synchronizing every device (cuCtxSynchronize on each primary context, so
// the scenes' own streams are drained too): what a caller waits for when
// the call returns once its results are in place.
type Clock struct {
	devs       []*launch.Device
	st         *launch.Stream
	start, end *launch.Event
}

// NewClock opens the devices of ordinals (the first is the one whose
// stream carries the events) and the clock's stream and events.
func NewClock(ordinals []int) (_ *Clock, err error) {
	if len(ordinals) == 0 {
		return nil, errors.New("benchhead: a clock needs a device")
	}
	c := &Clock{}
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

// Devices are the clock's devices, in the order of NewClock's ordinals.
func (c *Clock) Devices() []*launch.Device { return c.devs }

// Sync synchronizes every device of the clock.
func (c *Clock) Sync() error {
	for _, d := range c.devs {
		if err := d.Synchronize(); err != nil {
			return err
		}
	}
	return nil
}

// MS runs fn once between two synchronizations and returns its time in
// milliseconds: start event, fn (which returns once its results are in
// place), end event.
func (c *Clock) MS(fn func() error) (float64, error) {
	if err := c.Sync(); err != nil {
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
	if err := c.Sync(); err != nil {
		return 0, err
	}
	ms, err := launch.Elapsed(c.start, c.end)
	return float64(ms), err
}

// Interleaved runs every variant once per warm-up round, then times every
// variant once per round, in order, in the same round, and returns each
// variant's rounds in milliseconds (out[i] belongs to variants[i]).
func (c *Clock) Interleaved(warmup, repeat int, variants ...func() error) ([][]float64, error) {
	return Interleave(warmup, repeat, c.Sync, c.MS, variants...)
}

// Interleave runs every variant once per warm-up round, then sync, then
// times every variant once per round with timeOne, in order, in the same
// round, and returns each variant's rounds in milliseconds (out[i] belongs
// to variants[i]).
func Interleave(warmup, repeat int, sync func() error, timeOne func(func() error) (float64, error), variants ...func() error) ([][]float64, error) {
	if repeat <= 0 {
		return nil, errors.New("benchhead: no timed round")
	}
	for range warmup {
		for _, v := range variants {
			if err := v(); err != nil {
				return nil, err
			}
		}
	}
	if err := sync(); err != nil {
		return nil, err
	}
	out := make([][]float64, len(variants))
	for range repeat {
		for i, v := range variants {
			ms, err := timeOne(v)
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], ms)
		}
	}
	return out, nil
}

// Close releases the clock's stream, events and devices.
func (c *Clock) Close() {
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
