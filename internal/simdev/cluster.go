package simdev

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rayd-go/rayd/shard"
)

// ErrInjected is the error of an injected fault that names none.
var ErrInjected = errors.New("simdev: injected fault")

// Stage names a Replica method (and the builder) for fault injection,
// statistics and the step log.
type Stage string

// The stages.
const (
	StageBuild     Stage = "build"
	StageEnter     Stage = "enter"
	StageExit      Stage = "exit"
	StageScatter   Stage = "scatter"
	StageReplicate Stage = "replicate"
	StageLaunch    Stage = "launch"
	StageFold      Stage = "fold"
	StageGather    Stage = "gather"
	StageResult    Stage = "result"
	StageApply     Stage = "apply"
)

// Fault fails one step of one simulated device.
type Fault struct {
	// Device is the device ordinal.
	Device int
	// Stage is the step to fail.
	Stage Stage
	// Slots restricts the fault to the replicas of these layer positions
	// (shard.Slot.Index) on Device; nil means every replica of Device. It
	// tells apart the replicas of a device named twice (AllowSameDevice).
	Slots []int
	// Nth fails the Nth matching call of Stage counted from Inject
	// (1-based); 0 fails every call.
	Nth int
	// Async reports the failure through the returned event (Event.Wait and
	// every step that depends on it) instead of the call itself; it applies
	// to the enqueued stages (scatter, replicate, launch, fold, gather).
	Async bool
	// Silent makes an Apply succeed without changing the replica, so its
	// version falls behind (a divergence).
	Silent bool
	// Err is the error to report; nil means ErrInjected.
	Err error
}

// Config describes a simulated cluster.
type Config struct {
	// Devices is the number of visible devices.
	Devices int
	// LinkBytesPerSecond is the modelled bandwidth of every master↔device
	// link, per direction; 0 makes copies take no modelled time.
	LinkBytesPerSecond float64
	// RowNanos is the modelled compute time per row (lane) of a launch on a
	// device of speed 1.
	RowNanos float64
	// Speed is the per-device compute speed factor (missing or ≤ 0: 1).
	Speed []float64
	// Identities names every device (missing: "simdev", sm_90).
	Identities []shard.Identity
	// NoPeer lists directed pairs {from, to} without peer access.
	NoPeer [][2]int
	// BruteForce builds the reference scenes without a BVH.
	BruteForce bool
}

// Stats counts the steps of one device (Cluster.Stats: every replica on
// it) or of one replica (Cluster.SlotStats) since the last ResetStats. A
// call is counted when it is made, failed calls included.
type Stats struct {
	Enters, Exits, Scatters, Replicates, Launches, Folds, Gathers, Results, Applies int
	// RowsLaunched sums hi − lo over launches.
	RowsLaunched int
	// BytesIn and BytesOut are the modelled bytes copied to and from the
	// device over its link.
	BytesIn, BytesOut int64
}

// Step is one entry of the step log: the device, the replica's layer
// position (Slot; see Replica.Slot) and the step's rows (lanes).
type Step struct {
	Device      int
	Slot        int
	Stage       Stage
	Start, Stop int
}

// Cluster is a set of simulated devices. It implements shard.Topology and
// builds Replicas; its counters, log, clock and faults are safe for
// concurrent use.
type Cluster struct {
	cfg  Config
	live atomic.Int64

	mu        sync.Mutex
	faults    []*armedFault
	stats     map[int]*Stats
	slotStats map[[2]int]*Stats
	clocks    map[int]*engines
	log       []Step
	base      time.Duration
	latest    time.Duration
}

// engines are the modelled engines of one device, shared by every replica
// on it: its compute engine and the two directions of its link to the
// master. Replicas on one device keep their own queues (their own streams)
// but take turns on these, so a device named twice gives no speedup.
type engines struct {
	compute, in, out engine
}

// engine is the virtual time at which one engine of a device is free.
type engine struct {
	mu   sync.Mutex
	free time.Duration
}

// reserve books dur on the engine from no earlier than ready and returns
// the completion time.
func (e *engine) reserve(ready, dur time.Duration) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.free = max(e.free, ready) + dur
	return e.free
}

type armedFault struct {
	Fault
	seen int
}

// New returns a cluster of cfg.Devices simulated devices.
func New(cfg Config) *Cluster {
	return &Cluster{cfg: cfg, stats: map[int]*Stats{}, slotStats: map[[2]int]*Stats{}, clocks: map[int]*engines{}}
}

// DeviceCount implements shard.Topology.
func (c *Cluster) DeviceCount() int { return c.cfg.Devices }

// Topology returns the cluster itself: with Builder it makes a Cluster the
// replica source of a replicated scene (rayd.WithReplicaSource).
func (c *Cluster) Topology() shard.Topology { return c }

// CanAccessPeer implements shard.Topology.
func (c *Cluster) CanAccessPeer(from, to int) bool {
	for _, p := range c.cfg.NoPeer {
		if p == [2]int{from, to} {
			return false
		}
	}
	return true
}

// Identity implements shard.Topology.
func (c *Cluster) Identity(device int) shard.Identity {
	if device >= 0 && device < len(c.cfg.Identities) {
		return c.cfg.Identities[device]
	}
	return shard.Identity{Name: "simdev", Major: 9, Minor: 0}
}

func (c *Cluster) speed(device int) float64 {
	if device >= 0 && device < len(c.cfg.Speed) && c.cfg.Speed[device] > 0 {
		return c.cfg.Speed[device]
	}
	return 1
}

// Inject arms a fault.
func (c *Cluster) Inject(f Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = append(c.faults, &armedFault{Fault: f})
}

// ClearFaults disarms every fault.
func (c *Cluster) ClearFaults() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = nil
}

// engines returns the modelled engines of a device.
func (c *Cluster) engines(device int) *engines {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.clocks[device]
	if e == nil {
		e = &engines{}
		c.clocks[device] = e
	}
	return e
}

// step counts a call of stage by the replica of slot on device, logs it
// and returns the fault that fires for it, if any.
func (c *Cluster) step(device, slot int, stage Stage, lo, hi int, update func(*Stats)) *Fault {
	c.mu.Lock()
	defer c.mu.Unlock()
	if update != nil {
		for _, st := range []*Stats{statsOf(c.stats, device), statsOf(c.slotStats, [2]int{device, slot})} {
			update(st)
		}
	}
	c.log = append(c.log, Step{Device: device, Slot: slot, Stage: stage, Start: lo, Stop: hi})
	for _, f := range c.faults {
		if f.Device != device || f.Stage != stage || (f.Slots != nil && !slices.Contains(f.Slots, slot)) {
			continue
		}
		f.seen++
		if f.Nth == 0 || f.seen == f.Nth {
			fired := f.Fault
			if fired.Err == nil {
				fired.Err = ErrInjected
			}
			fired.Err = fmt.Errorf("%s %s: %w", name(device, slot), stage, fired.Err)
			return &fired
		}
	}
	return nil
}

func statsOf[K comparable](m map[K]*Stats, k K) *Stats {
	st := m[k]
	if st == nil {
		st = &Stats{}
		m[k] = st
	}
	return st
}

// name names a replica in errors: its device, and its layer position when
// it has one ("cuda:0 slot 1").
func name(device, slot int) string {
	if slot < 0 {
		return fmt.Sprintf("cuda:%d", device)
	}
	return fmt.Sprintf("cuda:%d slot %d", device, slot)
}

// Stats returns the counters of a device: the sum over its replicas.
func (c *Cluster) Stats(device int) Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.stats[device]; st != nil {
		return *st
	}
	return Stats{}
}

// SlotStats returns the counters of the replica of layer position slot on
// device alone.
func (c *Cluster) SlotStats(device, slot int) Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.slotStats[[2]int{device, slot}]; st != nil {
		return *st
	}
	return Stats{}
}

// Log returns the steps issued since the last ResetStats, in issue order.
func (c *Cluster) Log() []Step {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Step(nil), c.log...)
}

// ResetStats clears the counters and the log, and restarts the clock.
func (c *Cluster) ResetStats() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats = map[int]*Stats{}
	c.slotStats = map[[2]int]*Stats{}
	c.log = nil
	c.base = c.latest
}

// LivePayloads is the number of payloads allocated and not yet released,
// over every replica of the cluster.
func (c *Cluster) LivePayloads() int { return int(c.live.Load()) }

// Elapsed is the modelled time from the last ResetStats to the completion
// of the latest operation enqueued since.
func (c *Cluster) Elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.latest - c.base
}

// now is the virtual host time: work enqueued now starts no earlier.
func (c *Cluster) now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base
}

func (c *Cluster) advance(at time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latest = max(c.latest, at)
}

// copyTime models a transfer of n bytes over one link.
func (c *Cluster) copyTime(n int) time.Duration {
	if c.cfg.LinkBytesPerSecond <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / c.cfg.LinkBytesPerSecond * float64(time.Second))
}

// computeTime models a launch of rows rows on device.
func (c *Cluster) computeTime(device, rows int) time.Duration {
	if c.cfg.RowNanos <= 0 || rows <= 0 {
		return 0
	}
	return time.Duration(float64(rows) * c.cfg.RowNanos / c.speed(device))
}
