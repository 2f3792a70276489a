package rayd

import (
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// DeviceMemory is the device memory a scene allocated through rayd-go on
// one device: what is allocated now and the high-water mark since the last
// ResetPeakMemory (pooled stream-ordered allocations included, the driver's
// own reservations not).
type DeviceMemory struct {
	Device  int   `json:"device"`
	Current int64 `json:"current_bytes"`
	Peak    int64 `json:"peak_bytes"`
}

// Memory reports the scene's allocations per device, master first; nil on
// the CPU backend and on replicas that are not CUDA devices.
func (s *Scene) Memory() []DeviceMemory {
	var out []DeviceMemory
	for _, d := range s.memDevices() {
		cur, peak := d.Allocated()
		out = append(out, DeviceMemory{Device: d.Ordinal(), Current: cur, Peak: peak})
	}
	return out
}

// ResetPeakMemory sets every device's high-water mark to its current
// allocation.
func (s *Scene) ResetPeakMemory() {
	for _, d := range s.memDevices() {
		d.ResetPeak()
	}
}

func (s *Scene) memDevices() []*launch.Device {
	switch e := s.eng.(type) {
	case *cudaEngine:
		return []*launch.Device{e.dev}
	case *layerEngine:
		reps, err := e.l.Replicas()
		if err != nil {
			return nil
		}
		var devs []*launch.Device
		for _, r := range reps {
			ld, ok := shard.Unwrap(r).(launchDevicer)
			if !ok {
				return nil
			}
			devs = append(devs, ld.LaunchDevice())
		}
		return devs
	}
	return nil
}
