package launch

import (
	"sync/atomic"

	"github.com/rayd-go/rayd/driver"
)

// Stream is a non-blocking CUDA stream of one device.
type Stream struct {
	d      *Device
	s      driver.Stream
	closed atomic.Bool
}

// NewStream creates a non-blocking stream (never synchronises with the
// legacy null stream, which rayd-go never uses).
func (d *Device) NewStream() (*Stream, error) {
	var s driver.Stream
	err := d.with(func() error {
		var e error
		s, e = driver.NewStream(d.ordinal, driver.StreamNonBlocking)
		return e
	})
	if err != nil {
		return nil, err
	}
	return &Stream{d: d, s: s}, nil
}

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.d }

func (s *Stream) use(fn func() error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.d.with(fn)
}

// Synchronize blocks until all work queued on s has completed.
func (s *Stream) Synchronize() error { return s.use(s.s.Synchronize) }

// Wait makes later work on s wait until e has completed (e may belong to
// another device: cross-device dependencies are events).
func (s *Stream) Wait(e *Event) error {
	if e.closed.Load() {
		return ErrClosed
	}
	return s.use(func() error { return s.s.WaitEvent(e.e) })
}

// Close destroys the stream once its queued work has completed. Idempotent.
func (s *Stream) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.d.with(s.s.Destroy)
}

// Event is a CUDA event of one device.
type Event struct {
	d      *Device
	e      driver.Event
	closed atomic.Bool
}

// NewEvent creates an event; timing events can be passed to Elapsed, others
// are cheaper for pure dependencies.
func (d *Device) NewEvent(timing bool) (*Event, error) {
	flags := uint32(driver.EventDisableTiming)
	if timing {
		flags = driver.EventDefault
	}
	var e driver.Event
	err := d.with(func() error {
		var err error
		e, err = driver.NewEvent(d.ordinal, flags)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Event{d: d, e: e}, nil
}

// Record captures the work queued on s so far.
func (e *Event) Record(s *Stream) error {
	if s.d != e.d {
		return ErrWrongDevice
	}
	if e.closed.Load() {
		return ErrClosed
	}
	return s.use(func() error { return e.e.Record(s.s) })
}

// Synchronize blocks until the recorded work has completed.
func (e *Event) Synchronize() error {
	if e.closed.Load() {
		return ErrClosed
	}
	return e.d.with(e.e.Synchronize)
}

// Elapsed returns the milliseconds between two completed timing events.
func Elapsed(start, end *Event) (float32, error) {
	var ms float32
	err := start.d.with(func() error {
		var e error
		ms, e = driver.Elapsed(start.e, end.e)
		return e
	})
	return ms, err
}

// Close destroys the event. Idempotent.
func (e *Event) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	return e.d.with(e.e.Destroy)
}
