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
// runs. A failed query is not cached (the next call asks again) and is kept
// as Err, which shard.Plan reports instead of the refusal it caused. Safe
// for concurrent use.
type Topology struct {
	mu      sync.Mutex
	count   int
	counted bool
	err     error
	peers   map[[2]int]bool
	ids     map[int]shard.Identity
}

// NewTopology returns the topology of the visible CUDA devices. Nothing is
// queried until a method needs it.
func NewTopology() *Topology {
	return &Topology{peers: map[[2]int]bool{}, ids: map[int]shard.Identity{}}
}

// failed records the latest failed query.
func (t *Topology) failed(err error) {
	t.mu.Lock()
	t.err = err
	t.mu.Unlock()
}

// DeviceCount implements shard.Topology: the number of visible devices, 0
// when the driver cannot answer (Err says why).
func (t *Topology) DeviceCount() int {
	t.mu.Lock()
	if t.counted {
		defer t.mu.Unlock()
		return t.count
	}
	t.mu.Unlock()
	n, err := launch.Count()
	if err != nil {
		t.failed(err)
		return 0
	}
	t.mu.Lock()
	t.count, t.counted = n, true
	t.mu.Unlock()
	return n
}

// Err implements shard.QueryError: the failure of the latest query that
// failed, or nil.
func (t *Topology) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// CanAccessPeer implements shard.Topology: whether device from can address
// device to's memory. A device can always access itself; a failed query
// answers false (and is kept as Err).
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
	if err != nil {
		t.failed(err)
		return false
	}
	t.mu.Lock()
	t.peers[key] = ok
	t.mu.Unlock()
	return ok
}

// Identity implements shard.Topology: the device's name and compute
// capability. A device the driver cannot describe gets an identity naming
// it and the failure, which matches no other device's (and the failure is
// kept as Err).
func (t *Topology) Identity(device int) shard.Identity {
	t.mu.Lock()
	id, known := t.ids[device]
	t.mu.Unlock()
	if known {
		return id
	}
	info, err := launch.DeviceInfo(device)
	if err != nil {
		t.failed(err)
		return shard.Identity{Name: fmt.Sprintf("cuda:%d (unknown: %v)", device, err)}
	}
	id = shard.Identity{Name: info.Name, Major: info.CCMajor, Minor: info.CCMinor}
	t.mu.Lock()
	t.ids[device] = id
	t.mu.Unlock()
	return id
}
