package shard

import (
	"errors"
	"fmt"
	"github.com/rayd-go/rayd/geom"
	"strings"
)

// Sentinel errors. Every error this package creates matches one of them
// (errors.Is) and most come as a typed value that carries the details
// (errors.As); a call that failed and also poisoned the layer returns both
// errors joined. Validation errors of the built-in tasks are geom's
// (geom.ErrLength, geom.ErrInvalidArgument).
var (
	// ErrOptionsWithoutDevices: options were given without a device list.
	ErrOptionsWithoutDevices = errors.New("shard: Options also requires devices")
	// ErrInvalidDevices matches every *DeviceError (empty list, duplicate
	// or out-of-range ordinals).
	ErrInvalidDevices = errors.New("shard: invalid device list")
	// ErrNoDevices: the topology reports no visible device.
	ErrNoDevices = errors.New("shard: needs CUDA: no device is visible")
	// ErrInvalidOption matches every *OptionError.
	ErrInvalidOption = errors.New("shard: invalid multi-device option")
	// ErrNoPeerAccess matches a *TopologyError about missing peer access.
	ErrNoPeerAccess = errors.New("shard: peer access is missing")
	// ErrHeterogeneous matches a *TopologyError about mixed device models.
	ErrHeterogeneous = errors.New("shard: devices are heterogeneous")
	// ErrBudget matches every *BudgetError: a chunk plan that cannot hold
	// the memory budget, refused before any launch.
	ErrBudget = errors.New("shard: memory budget cannot be met")
	// ErrLaneWindow matches every *LaneWindowError.
	ErrLaneWindow = errors.New("shard: invalid lane window")
	// ErrNotBuilt: the layer has no replicas yet.
	ErrNotBuilt = errors.New("shard: scene is not ready: build it before querying")
	// ErrPoisoned matches every *PoisonedError: an earlier failure may have
	// left the replicas diverged and the layer refuses work until rebuilt.
	ErrPoisoned = errors.New("shard: replicated scene is poisoned")
	// ErrDiverged matches every *DivergedError.
	ErrDiverged = errors.New("shard: replicas diverged")
	// ErrUnsupported: the request has no multi-device semantics.
	ErrUnsupported = errors.New("shard: not supported by the multi-device layer")
	// ErrReplica matches every *ReplicaError: a replica failed a step.
	ErrReplica = errors.New("shard: replica failed")
)

// DeviceError rejects the device list given to Plan.
type DeviceError struct {
	// Devices lists the offending ordinals (duplicates or out of range).
	Devices []int
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *DeviceError) Error() string {
	if len(e.Devices) == 0 {
		return "shard: devices: " + e.Reason
	}
	return fmt.Sprintf("shard: devices: %s %v", e.Reason, e.Devices)
}

// Is reports whether target is ErrInvalidDevices.
// It also matches geom.ErrInvalidArgument: a bad device list is a bad
// argument of the caller's.
func (e *DeviceError) Is(target error) bool {
	return target == ErrInvalidDevices || target == geom.ErrInvalidArgument
}

// OptionError rejects one field of Options. Field is the Go field name, with
// the map key for OperationWeights (`OperationWeights["trace_reflections"]`).
type OptionError struct {
	Field  string
	Reason string
}

// Error implements error.
func (e *OptionError) Error() string { return "shard: Options." + e.Field + ": " + e.Reason }

// Is reports whether target is ErrInvalidOption.
// It also matches geom.ErrInvalidArgument.
func (e *OptionError) Is(target error) bool {
	return target == ErrInvalidOption || target == geom.ErrInvalidArgument
}

// Identity is what makes two devices interchangeable for the bitwise claim:
// the model name and the compute capability.
type Identity struct {
	Name         string
	Major, Minor int
}

// String spells the identity as "name (sm_MAJMIN)".
func (id Identity) String() string { return fmt.Sprintf("%s (sm_%d%d)", id.Name, id.Major, id.Minor) }

// TopologyError refuses a device set that is not peer-connected (Missing
// lists the remotes without bidirectional peer access to the master) or not
// homogeneous (Identities lists every device).
type TopologyError struct {
	Master     int
	Missing    []int
	Devices    []int
	Identities []Identity
}

// Error implements error.
func (e *TopologyError) Error() string {
	if len(e.Missing) > 0 {
		return fmt.Sprintf("shard: peer access is missing between cuda:%d and %v in either direction; "+
			"use a peer-connected device set or set Options.AllowNoPeerAccess", e.Master, e.Missing)
	}
	parts := make([]string, len(e.Devices))
	for i, d := range e.Devices {
		parts[i] = fmt.Sprintf("cuda:%d=%s", d, e.Identities[i])
	}
	return "shard: devices must share an identical GPU model and compute capability, got a heterogeneous set " +
		strings.Join(parts, ", ") + "; set Options.AllowHeterogeneous to run it anyway"
}

// Is reports whether target is ErrNoPeerAccess or ErrHeterogeneous.
func (e *TopologyError) Is(target error) bool {
	if len(e.Missing) > 0 {
		return target == ErrNoPeerAccess
	}
	return target == ErrHeterogeneous
}

// BudgetError refuses a chunk plan before any launch: Required bytes would
// be needed where Options.MemoryBudgetBytes allows Budget.
type BudgetError struct {
	Operation string
	Required  int64
	Budget    int64
	Reason    string
}

// Error implements error.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("shard: %s: %s (%d bytes required, MemoryBudgetBytes is %d)",
		e.Operation, e.Reason, e.Required, e.Budget)
}

// Is reports whether target is ErrBudget.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// LaneWindowError rejects a caller lane window [Offset, Offset+Count) over
// a lane space of Total lanes.
type LaneWindowError struct {
	Total, Offset, Count int
	Reason               string
}

// Error implements error.
func (e *LaneWindowError) Error() string {
	return fmt.Sprintf("shard: lane window (offset %d, count %d) over %d lanes: %s", e.Offset, e.Count, e.Total, e.Reason)
}

// Is reports whether target is ErrLaneWindow.
func (e *LaneWindowError) Is(target error) bool { return target == ErrLaneWindow }

// PoisonedError is returned by every call on a poisoned layer. Operation
// names the step that poisoned it ("build", "update_mesh_vertices", "sync",
// "set_edge_mask", "stream handoff", ...), Cause is that step's error. The
// cause is deliberately not unwrapped: a refusal is not a repetition of the
// original failure.
type PoisonedError struct {
	Operation string
	Cause     error
}

// Error implements error.
func (e *PoisonedError) Error() string {
	return fmt.Sprintf("shard: replicated scene poisoned by %s: %v; rebuild it (Scene.Rebuild; Layer.Build on a bare layer) before any other call",
		e.Operation, e.Cause)
}

// Is reports whether target is ErrPoisoned.
func (e *PoisonedError) Is(target error) bool { return target == ErrPoisoned }

// DivergedError reports replicas whose geometry versions differ after a
// build or a broadcast mutation.
type DivergedError struct {
	Devices  []int
	Versions []uint64
}

// Error implements error.
func (e *DivergedError) Error() string {
	return fmt.Sprintf("shard: replicas diverged: versions %v on devices %v", e.Versions, e.Devices)
}

// Is reports whether target is ErrDiverged.
func (e *DivergedError) Is(target error) bool { return target == ErrDiverged }

// ReplicaError wraps the failure of one step of one replica. Stage is the
// Replica method ("scatter", "replicate", "launch", "fold", "gather",
// "result", "apply", "enter", "exit") or "build"; Start and Stop are the
// chunk's rows (lanes), zero for a step without rows.
type ReplicaError struct {
	Device    int
	Stage     string
	Operation string
	Start     int
	Stop      int
	Err       error
}

// Error implements error.
func (e *ReplicaError) Error() string {
	return fmt.Sprintf("shard: %s on cuda:%d (%s, rows [%d,%d)): %v", e.Stage, e.Device, e.Operation, e.Start, e.Stop, e.Err)
}

// Is reports whether target is ErrReplica.
func (e *ReplicaError) Is(target error) bool { return target == ErrReplica }

// Unwrap returns the replica's own error.
func (e *ReplicaError) Unwrap() error { return e.Err }
