package replica

import (
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// Topology is the shard.Topology of this machine's CUDA devices, answered
// by the driver without opening them: the device count, peer access per
// directed pair (cuDeviceCanAccessPeer) and each device's identity, its
// name and compute capability (cuDeviceGetName and the compute capability
// attributes). Answers are cached: they do not change while the process
// runs. Safe for concurrent use.
type Topology struct {
	once  sync.Once
	count int
	err   error

	mu    sync.Mutex
	peers map[[2]int]bool
	ids   map[int]shard.Identity
}

// NewTopology returns the topology of the visible CUDA devices. Nothing is
// queried until a method needs it.
func NewTopology() *Topology {
	return &Topology{peers: map[[2]int]bool{}, ids: map[int]shard.Identity{}}
}

func (t *Topology) countDevices() {
	t.once.Do(func() {
		t.count, t.err = launch.Count()
		if t.err != nil {
			t.count = 0
		}
	})
}

// DeviceCount implements shard.Topology: the number of visible devices, 0
// when the driver cannot be loaded (Err says why).
func (t *Topology) DeviceCount() int {
	t.countDevices()
	return t.count
}

// Err is the reason DeviceCount is 0, if the driver failed to answer.
func (t *Topology) Err() error {
	t.countDevices()
	return t.err
}

// CanAccessPeer implements shard.Topology: whether device from can address
// device to's memory. A device can always access itself; a failed query
// answers false.
func (t *Topology) CanAccessPeer(from, to int) bool {
	if from == to {
		return true
	}
	key := [2]int{from, to}
	t.mu.Lock()
	ok, known := t.peers[key]
	t.mu.Unlock()
	if known {
		return ok
	}
	ok, err := launch.CanAccessPeer(from, to)
	ok = ok && err == nil
	t.mu.Lock()
	t.peers[key] = ok
	t.mu.Unlock()
	return ok
}

// Identity implements shard.Topology: the device's name and compute
// capability. A device the driver cannot describe gets an identity naming
// it and the failure, which matches no other device's.
func (t *Topology) Identity(device int) shard.Identity {
	t.mu.Lock()
	id, known := t.ids[device]
	t.mu.Unlock()
	if known {
		return id
	}
	info, err := launch.DeviceInfo(device)
	switch {
	case err != nil && info.Name == "":
		id = shard.Identity{Name: fmt.Sprintf("cuda:%d (unknown: %v)", device, err)}
	default: // attributes that failed do not change the identity fields read
		id = shard.Identity{Name: info.Name, Major: info.CCMajor, Minor: info.CCMinor}
	}
	t.mu.Lock()
	t.ids[device] = id
	t.mu.Unlock()
	return id
}
