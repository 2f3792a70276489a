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
// The per_ray tasks of package shard (Intersect with any flags,
// TraceReflections, Visible) run on host inputs and return host records.
// The device-resident tasks of this package (DeviceIntersect,
// DeviceReflections, DeviceVisible) take their inputs and the whole output
// record in buffers of the master, RayD's own setting: the master works in
// place and remotes are fed and drained by peer copies. The RF grid_reduce
// and source_lane tasks fold partial grids in place per device and gather
// them to the master (rf_steps.go). The
// broadcast mutations are UpdateVertices (staged in the replica's host
// tables), SyncGeometry (a refit on the device) and SetEdgeMask (recorded).
// Every replica runs the same kernels on the same tables, so a sharded
// result is bitwise the single-device result on identical devices.
//
// # Streams, events and memory
//
// Each replica creates its streams once, at build, and reuses them for
// every call: on its device main (build, refit, exit edges), compute and
// side (per_ray launches alternate between the two, so that a chunk's
// kernel fills the SMs the tail of the previous chunk's leaves idle; every
// edge below that names compute holds for side too), in (host uploads) and
// gather; on the master device, result for the
// master and, per remote, scatter (peer copies of device inputs) and recv
// (allocation of gathered host results). All are non-blocking; nothing is
// issued on the legacy null stream. Every dependency between two streams,
// on one device or across devices, is an event recorded on the producer's
// stream and waited for by the consumer's (cuStreamWaitEvent):
//
//	Enter    main ─entry→ compute (a remote's compute also waits on the
//	         master's entry, and its scatter stream too)
//	Scatter  host: alloc+upload on in ─uploaded→
//	         device, remote: alloc on in ─allocated→ scatter (after the
//	         caller's Stream) peer copy ─copied→
//	Launch   compute waits, allocates the outputs, launches ─computed→
//	Gather   remote: recv alloc ─allocated→ gather waits computed, peer
//	         copy to the master ─gathered→
//	Result   master: result stream waits, downloads (host tasks), or the
//	         caller's Stream waits (device tasks)
//	Exit     compute ─done→ main, so a later refit waits for the queries
//
// No step waits on the host except Result of a host task (the contract
// asks for a host record) and Event.Wait. Memory for a chunk comes from the
// device's stream-ordered pool and is freed in stream order on the stream
// of its last use (launch.Buffer.CloseOn), after that stream was made to
// wait for every earlier use, so releasing a payload never blocks and
// never stalls the stream that allocated it. Events come from a per-device
// pool and return to it when the layer drops them.
//
// Place in the package graph (ARCHITECTURE.md): engine/replicated → shard → replica → accel →
// launch. replica implements the interface declared by shard and so
// imports shard's types; shard itself never imports replica, accel or
// launch.
package replica
