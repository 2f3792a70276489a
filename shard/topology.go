package shard

import (
	"errors"
	"fmt"
	"slices"
)

// Topology is what Plan needs to know about the machine: how many devices
// are visible, which pairs have peer access and what each device is. The
// public package answers it from the driver (cuDeviceCanAccessPeer in both
// directions, cuDeviceGetName and the compute capability attributes); tests
// use Uniform or a simulated cluster.
type Topology interface {
	// DeviceCount is the number of visible devices (0: none, no driver).
	DeviceCount() int
	// CanAccessPeer reports whether device from can access device to's memory.
	CanAccessPeer(from, to int) bool
	// Identity returns the model name and compute capability of a device.
	Identity(device int) Identity
}

// QueryError is optionally implemented by a Topology whose answers come from
// a driver: Err returns the failure of its latest query that failed (nil if
// none), so that Plan reports a driver failure as itself rather than as the
// missing device, peer access or identity it stood in for.
type QueryError interface {
	Err() error
}

// ErrTopologyQuery matches a Plan refusal caused by a failed topology query
// (the driver's error is wrapped too).
var ErrTopologyQuery = errors.New("shard: the driver failed to describe the devices")

// queried adds the driver failure behind a topology refusal, when the
// topology reports one: the error matches the refusal, ErrTopologyQuery and
// the driver's error.
func queried(topo Topology, refusal error) error {
	if q, ok := topo.(QueryError); ok {
		if err := q.Err(); err != nil {
			return fmt.Errorf("%w: %w: %w", ErrTopologyQuery, err, refusal)
		}
	}
	return refusal
}

// Uniform returns the topology of n identical, fully peer-connected devices.
func Uniform(n int) Topology { return uniform(n) }

type uniform int

func (u uniform) DeviceCount() int          { return int(u) }
func (uniform) CanAccessPeer(_, _ int) bool { return true }
func (uniform) Identity(int) Identity       { return Identity{Name: "uniform", Major: 0, Minor: 0} }

// checkDevices validates the device list against the topology, in the
// spec's order: empty, duplicates (unless sameDevice), no device visible,
// out of range.
func checkDevices(devices []int, topo Topology, sameDevice bool) error {
	if len(devices) == 0 {
		return &DeviceError{Reason: "needs at least one device"}
	}
	seen := map[int]bool{}
	var dup []int
	for _, d := range devices {
		if seen[d] && !slices.Contains(dup, d) {
			dup = append(dup, d)
		}
		seen[d] = true
	}
	if len(dup) > 0 && !sameDevice {
		slices.Sort(dup)
		return &DeviceError{Devices: dup, Reason: "duplicate devices"}
	}
	count := 0
	if topo != nil {
		count = topo.DeviceCount()
	}
	if count <= 0 {
		return queried(topo, ErrNoDevices)
	}
	var bad []int
	for _, d := range devices {
		if d < 0 || d >= count {
			bad = append(bad, d)
		}
	}
	if len(bad) > 0 {
		return &DeviceError{Devices: bad, Reason: fmt.Sprintf("%d CUDA device(s) are visible; out of range:", count)}
	}
	return nil
}

// checkTopology refuses a multi-device set without bidirectional peer access
// or with mixed identities, unless the options accept it.
func checkTopology(devices []int, topo Topology, o *Options) error {
	if len(devices) < 2 {
		return nil
	}
	master := devices[0]
	if !o.AllowNoPeerAccess {
		var missing []int
		for _, r := range devices[1:] {
			if r == master || slices.Contains(missing, r) {
				continue // a replica on the master's own device needs no peer access
			}
			if !topo.CanAccessPeer(master, r) || !topo.CanAccessPeer(r, master) {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return queried(topo, &TopologyError{Master: master, Missing: missing})
		}
	}
	if !o.AllowHeterogeneous {
		ids := make([]Identity, len(devices))
		mixed := false
		for i, d := range devices {
			ids[i] = topo.Identity(d)
			mixed = mixed || ids[i] != ids[0]
		}
		if mixed {
			return queried(topo, &TopologyError{Master: master, Devices: slices.Clone(devices), Identities: ids})
		}
	}
	return nil
}
