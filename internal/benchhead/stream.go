package benchhead

import "github.com/rayd-go/rayd/launch"

// StreamMS returns the milliseconds the work fn queues on s takes, between
// two CUDA events recorded on s around it (created for the call on d, s's
// device), once the end event has completed. Unlike Clock.MS it does not
// synchronize the devices: fn's work must be queued on s.
func StreamMS(d *launch.Device, s *launch.Stream, fn func() error) (float64, error) {
	start, err := d.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer start.Close()
	end, err := d.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer end.Close()
	if err := start.Record(s); err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	if err := end.Record(s); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := launch.Elapsed(start, end)
	return float64(ms), err
}
