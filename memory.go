package rayd

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
// the CPU backend and on replicas that are not CUDA devices. A replicated
// scene with several replicas on one device lists that device once per
// replica.
func (s *Scene) Memory() []DeviceMemory {
	var out []DeviceMemory
	for _, m := range s.eng.Memory() {
		out = append(out, DeviceMemory{Device: m.Device, Current: m.Current, Peak: m.Peak})
	}
	return out
}

// ResetPeakMemory sets every device's high-water mark to its current
// allocation.
func (s *Scene) ResetPeakMemory() { s.eng.ResetPeak() }
