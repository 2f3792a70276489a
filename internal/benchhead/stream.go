package benchhead

import (
	"errors"

	"github.com/rayd-go/rayd/launch"
)

// StreamTimer times the work a function queues on one stream between two
// CUDA timing events recorded on that stream. Its zero value is ready: the
// events are created on the stream's device by the first MS and reused by
// every later one, so a timed round creates and destroys no event. Close
// releases them.
type StreamTimer struct {
	start, end *launch.Event
}

// MS returns the milliseconds the work fn queues on s takes, between the
// timer's two events recorded on s around it, once the end event has
// completed. Unlike Clock.MS it does not synchronize the devices: fn's work
// must be queued on s. Every call must use a stream of the device of the
// first (launch.ErrWrongDevice otherwise).
func (t *StreamTimer) MS(s *launch.Stream, fn func() error) (float64, error) {
	if t.start == nil {
		start, err := s.Device().NewEvent(true)
		if err != nil {
			return 0, err
		}
		end, err := s.Device().NewEvent(true)
		if err != nil {
			_ = start.Close()
			return 0, err
		}
		t.start, t.end = start, end
	}
	if err := t.start.Record(s); err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	if err := t.end.Record(s); err != nil {
		return 0, err
	}
	if err := t.end.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := launch.Elapsed(t.start, t.end)
	return float64(ms), err
}

// Close destroys the timer's events, if MS created them. Idempotent.
func (t *StreamTimer) Close() error {
	if t.start == nil {
		return nil
	}
	return errors.Join(t.start.Close(), t.end.Close())
}
