package shard

// Event is the completion handle of work enqueued on a device. A nil Event
// is already complete. The layer passes events from one step to the next as
// dependencies and only waits on them at a retirement or at the end of a
// call. A CUDA implementation wraps a cuEvent recorded on the stream that
// ran the work: the next step makes its own stream wait on it
// (cuStreamWaitEvent), and Wait is cuEventSynchronize. An asynchronous
// failure of the work is returned by Wait.
type Event interface {
	Wait() error
}

// Payload is device-resident data of one call: a chunk's scattered inputs,
// its outputs, a replicated input set or a grid partial. It is owned by the
// replica that returned it and opaque to the layer, which only hands it back
// to that replica (or, once gathered, to the master) and releases it.
type Payload interface {
	// Release returns the memory. It may be called while work that uses
	// the payload is still enqueued: the implementation defers the free
	// until that work has passed (a stream-ordered free). Idempotent.
	Release()
}

// Task is one call of an operation as the layer schedules it. The concrete
// type carries the inputs; replicas recognise the task types they implement
// (the built-in host tasks Intersect, TraceReflections and Visible, or their
// own). Op is consulted once per call.
type Task interface {
	Op() Op
}

// Class is the sharding class of an operation.
type Class int

const (
	// PerRay operations map each input row to one output row; shards and
	// chunks are placed, never summed, so results are bitwise the
	// single-device result.
	PerRay Class = iota
	// GridReduce operations accumulate a lane space into fixed grids;
	// per-device partials are summed on the master in device order.
	GridReduce
)

// String returns "per_ray" or "grid_reduce".
func (c Class) String() string {
	if c == GridReduce {
		return "grid_reduce"
	}
	return "per_ray"
}

// Op describes an operation to the planner: its key for weight resolution,
// its class and its byte model (spec §3). All byte counts are per row (per
// lane for grid_reduce).
type Op struct {
	// Key is the operation key ("intersect_full", "trace_reflections:4").
	Key string
	// Class is PerRay or GridReduce.
	Class Class
	// RowBytes is the native output plus tape per row; it drives memory.
	RowBytes int
	// ResultRowBytes is the returned output per row (0: RowBytes).
	ResultRowBytes int
	// TransferRowBytes is the copied input plus the returned output per
	// row; it scales the per_ray floor.
	TransferRowBytes int
	// FixedBytes is reserved per device when a budget is set (grid_reduce:
	// replicated inputs and grid partials).
	FixedBytes int64
	// WarpChunks rounds grid_reduce chunk sizes to whole 32-lane warps.
	WarpChunks bool
	// LaneFloorExtra is added to MinLanesPerDevice for this operation.
	LaneFloorExtra int
	// ZeroOffsetOnly marks a backend that cannot execute a non-zero lane
	// offset: the whole window stays on the master in one launch.
	ZeroOffsetOnly bool
}

// resultRowBytes is ResultRowBytes with its default.
func (op Op) resultRowBytes() int {
	if op.ResultRowBytes > 0 {
		return op.ResultRowBytes
	}
	return op.RowBytes
}

// MemoryRowBytes is the per-row cost charged to the budget of a per_ray
// plan: max(RowBytes, 1) + max(TransferRowBytes − ResultRowBytes, 0), that
// is the tape and output plus the copied inputs.
func (op Op) MemoryRowBytes() int {
	return max(op.RowBytes, 1) + max(op.TransferRowBytes-op.resultRowBytes(), 0)
}

// Replica is one device's copy of the scene, driven by the layer through
// enqueue-and-return steps: nothing here may block the host on the device
// except Event.Wait and Result. The master replica is devices[0]; it serves
// its own chunks without copies, receives every gather and folds the grid
// partials.
//
// A CUDA implementation keeps per device a compute stream and a gather
// stream, and on the master one scatter stream per remote, all created once
// and reused; Enter records the entry edges, every step waits on the event
// it is given and records one for the next, and Exit hands the streams back
// to the caller's stream. Each layer call drives a replica from one
// goroutine; concurrent layer calls may use it from several at once.
type Replica interface {
	// Device returns the device ordinal.
	Device() int
	// Version is the geometry version, advanced by every mutation.
	Version() uint64
	// Enter starts a call on this device: the master is entered first with
	// a nil argument and returns its entry event; every other device is
	// entered with it, and its private streams wait on both entries.
	Enter(master Event) (Event, error)
	// Exit ends a call: the device's current stream waits on the last work
	// of this call, so a later mutation cannot overwrite geometry still in
	// use. A failure poisons the layer.
	Exit() error
	// Scatter copies rows [lo, hi) of t's inputs, which live with the
	// caller on the master, to this device. On the master it returns a view
	// of the caller's data and a nil event.
	Scatter(t Task, lo, hi int) (Payload, Event, error)
	// Replicate copies t's whole inputs (a grid_reduce task's states and
	// materials) to this device.
	Replicate(t Task) (Payload, Event, error)
	// Launch runs t over rows (lanes) [lo, hi) of the call on the inputs in,
	// after ready, and returns the outputs.
	Launch(t Task, in Payload, lo, hi int, ready Event) (Payload, Event, error)
	// Fold adds part into acc on this device once both are ready (acc and
	// part may come from different streams or devices); a nil acc makes
	// part the accumulator. It returns the accumulator and its event.
	Fold(t Task, acc Payload, accReady Event, part Payload, partReady Event) (Payload, Event, error)
	// Gather copies outputs of this device to the master after ready. On the
	// master it returns out and ready unchanged.
	Gather(t Task, out Payload, ready Event) (Payload, Event, error)
	// Result hands a payload resident on the master out as t's result value
	// (called on the master only). For host tasks it waits for ready and
	// downloads the record; for device-resident results it makes the
	// caller's stream wait on ready and returns a view. The value must stay
	// valid after the layer releases p (ownership moves to the caller).
	Result(t Task, p Payload, ready Event) (any, error)
	// Apply enqueues a mutation of the replica's geometry (after every query
	// already issued to it) and advances its version.
	Apply(m Mutation) error
	// Close releases the replica. Idempotent.
	Close() error
}

// Router is implemented by replicas that can run a per_ray task's rows
// where they lie. Route answers for a remote (never asked of the master):
// PathPeerDirect when its launch can read the task's inputs and write its
// outputs in the master's memory (device-resident tasks, with peer access
// or on the master's own device), PathCompact when it can also send an
// intersect's compact record, and PathCopy otherwise. want is the layer's
// Options.Transfer; a forced path the replica cannot take falls back to
// PathCopy, which every replica supports. A replica that is not a Router
// takes PathCopy.
type Router interface {
	Route(t Task, want Transfer) Path
	// ScatterDirect is Scatter for a call whose remote rows take path
	// (PathPeerDirect or PathCompact, as Route answered): it copies
	// nothing, and its payload tells Launch to work in the master's
	// memory and Gather to copy nothing.
	ScatterDirect(t Task, lo, hi int, path Path) (Payload, Event, error)
}

// Mutation is a change broadcast to every replica.
type Mutation interface {
	// Operation names the mutation in errors and poison records.
	Operation() string
}

// UpdateVertices replaces the vertices of dynamic mesh Mesh; queries see the
// new geometry after a SyncGeometry.
type UpdateVertices struct {
	Mesh     int
	Vertices []float32
}

// Operation returns "update_mesh_vertices".
func (UpdateVertices) Operation() string { return "update_mesh_vertices" }

// SyncGeometry commits staged vertex updates (refits the acceleration
// structures).
type SyncGeometry struct{}

// Operation returns "sync".
func (SyncGeometry) Operation() string { return "sync" }

// SetEdgeMask replaces the per-edge mask of edge queries.
type SetEdgeMask struct {
	Mask []bool
}

// Operation returns "set_edge_mask".
func (SetEdgeMask) Operation() string { return "set_edge_mask" }
