// Package replica is rayd-go's CUDA implementation of the multi-device
// layer's shard.Replica: one device's copy of a scene (a BVH built by
// package accel from the replica's own copy of the meshes' global tables)
// and the streams and events that scatter a chunk's rows to it, launch the
// query there and gather the results back to the master. Source opens the
// devices, enables peer access between the master and every remote, and
// hands out the shard.Builder; Topology answers shard.Plan from the driver.
//
// # Operations
//
// The per_ray tasks of package shard run on host inputs and return host
// records: Intersect with any flags, TraceReflections, Visible and
// Crossings over the replica's BVH (crossings_steps.go); the nearest-edge
// queries NearestEdge, NearestEdgeRay and NearestEdges over its edge BVH
// (edge_steps.go); the visibility variants
// (shard.SegmentTask: a chunk's rows are the segments [lo·PerRow,
// hi·PerRow) of the expanded batch, whose closest blockers the BVH finds
// and the task's FinishRows turns into the chunk's record;
// segment_steps.go); and the backward passes IntersectVJP, NearestEdgeVJP
// and NearestEdgeRayVJP, whose chunk record holds its rows' gradients and
// the chunk's vertex-gradient partial, which package shard sums on the
// host (vjp_steps.go). Inputs and outputs are columns of a layout
// (columns.go): float32, int32, byte and float64 columns of a fixed width
// per row, and fixed columns of a fixed length per chunk (a vertex
// partial), allocated, copied and downloaded alike.
//
// The device-resident tasks of this package (DeviceIntersect,
// DeviceReflections, DeviceVisible) take their inputs and the whole output
// record in buffers of the master, RayD's own setting: the master works in
// place and remotes are fed and drained by copies. The RF grid_reduce
// tasks run resident (shard.ResidentLanes, rf_lanes.go): each replica keeps
// its packed inputs (reused while their content and the geometry are
// unchanged) and its partial on its device between calls, the master folds
// the remotes' partials where they lie and downloads the total once. The
// source_lane task, and wedge collection, run through the steps
// (rf_steps.go), which fold partial grids in place per device and gather
// them to the master.
//
// The broadcast mutations are UpdateVertices (validated and staged),
// SyncGeometry (the staged vertices written to the replica's host tables
// and a refit of the BVH, and of the edge BVH once built, on main) and
// SetEdgeMask (checked against the edge table, recorded, and installed on
// the edge BVH on main once built). Each replica builds its edge BVH from
// its own tables on main at its first edge task, with the current mask;
// launches that read it wait for that build. Every replica runs the same
// kernels on the same tables, so a sharded result is bitwise the
// single-device result on identical devices, row by row; the vertex
// gradients of the backward passes are sums whose last bits depend on the
// order of the device's atomic additions and of the chunks.
//
// A layer may name one device more than once (shard.Options.AllowSameDevice):
// every position but the master's is then a remote on the master's device,
// with its own streams, BVH, edge BVH and counters, driven through the same
// scatter, launch and gather steps; its copies to and from the master are
// device-to-device copies (launch.Buffer.CopyFrom within one device) and it
// needs no peer access.
//
// # Paths
//
// A device task's rows reach a remote in one of two ways (shard.Router;
// DispatchRecord.Path says which ran). Peer-direct, the default wherever the
// remote can address the master's memory (its own device, or peer access
// with the master's stream-ordered pool opened to it): the call is one
// launch per device, and the remote's kernel reads its rows from the
// caller's input buffers and writes its results into the caller's output
// buffers where they lie, so nothing is copied or allocated. The copy path
// (host tasks, chunked calls, remotes without access, or
// shard.TransferCopy): inputs are uploaded or copied column by column into
// a staging block on the remote and results are written into another; a
// host task's block is gathered to a staging block on the master in one
// copy per chunk, a device task's columns straight into the caller's
// record, one copy per column.
//
// # Streams, events and memory
//
// Each replica creates its streams once, at build, and reuses them for
// every call: on its device main (build, refit, edge mask), compute and
// side (per_ray launches alternate between the two, so that a chunk's
// kernel fills the SMs the tail of the previous chunk's leaves idle; every
// edge below that names compute holds for side too), in (host uploads) and
// gather; on the master device, result for the
// master and, per remote, scatter (peer copies of device inputs) and recv
// (staging of gathered host results). All are non-blocking; nothing is
// issued on the legacy null stream. Every dependency between two streams,
// on one device or across devices, is an event recorded on the producer's
// stream and waited for by the consumer's (cuStreamWaitEvent):
//
//	Scatter  host: stage+upload on in ─uploaded→
//	         device, direct: none (the launch waits on the caller's Stream)
//	         device, copy: stage on in ─staged→ scatter (after the
//	         caller's Stream) peer copy ─copied→
//	Launch   compute waits, stages the outputs (copy path) or takes the
//	         caller's rows (master, direct), launches ─computed→
//	Gather   copy path: recv stage ─staged→ gather waits computed, one peer
//	         copy to the master ─gathered→
//	Result   master: result stream waits, downloads (host tasks), or the
//	         caller's Stream waits (device tasks)
//
// Calls record no entry or exit edges. Ordering against mutations is set
// up by the mutations themselves, which hold the layer exclusively: Apply
// makes main wait for every launch queued on compute and side before it
// refits or changes the edge mask, and makes compute and side wait for main
// afterwards; the edge BVH, built on main at the first edge task, is
// ordered before every launch that reads it the same way.
//
// No step waits on the host except Result of a host task (the contract
// asks for a host record), Event.Wait, and the first edge task's launch on
// a replica, which returns once that replica's edge BVH is built. A copy
// path chunk takes a staging block from its replica's pool on the stream of
// its first use (waiting for the block's previous use) and returns it on
// the stream of its last use, after that stream was made to wait for every
// earlier use (recording the block's own event), so releasing a payload
// never blocks; blocks only grow and are freed at Close. Events come from a
// per-device pool: every event recorded during a call stays valid until the
// last running call of the Source exits, and then returns to the pool, so
// steady-state calls create no event and allocate nothing.
//
// Place in the package graph (ARCHITECTURE.md): engine/replicated → shard → replica → accel →
// launch. replica implements the interface declared by shard and so
// imports shard's types; shard itself never imports replica, accel or
// launch.
package replica
