// Package simdev simulates a machine of several GPUs for the tests of the
// multi-device layer: each simulated device is a shard.Replica that runs the
// CPU reference (ref.Scene) on its own copy of the scene, so sharded results
// must be bitwise those of a single ref.Scene. It answers every task of
// package shard: intersect, trace_reflections, visible and crossings; the
// nearest-edge queries (package edge over the replica's own edge table, vertices and
// mask) and the visibility variants (ref.Scene.SegmentBlockers, then the
// task's FinishRows); the backward passes (ref.IntersectVJP and package
// edge's VJPs, one vertex partial per launch); and the RF operations
// (package rf). Queries see vertex updates once a SyncGeometry has passed
// the replica's compute queue, and an edge mask once its SetEdgeMask has.
//
// Every step that a real device would enqueue on a stream is enqueued here
// on a queue — one compute queue per device and one queue per direction of
// its link to the master — and runs on its own goroutine once its
// predecessor and its dependencies completed; the returned events close
// when it has run. A layer that read a chunk before waiting for its event
// would therefore race, which the race detector reports. Remote devices
// deep-copy every input and output; the master serves views of the
// caller's memory, as the real master does.
//
// Time is modelled, not slept: every operation gets a virtual completion
// time from the link bandwidth (Config.LinkBytesPerSecond), the compute
// cost per row and per-device speed factors, and Cluster.Elapsed reports
// the modelled makespan. Faults (Cluster.Inject) fail the Nth call of a
// step on a device, synchronously or through its event, or make a mutation
// silently skip a replica so that its version falls behind.
//
// A device may hold several replicas (shard.Options.AllowSameDevice). Each
// is known by its slot, its position in the layer's device list: it keeps
// its own tables, queues and mask, its steps are logged with its slot,
// counted per device and per slot, and Fault.Slots aims a fault at it. The
// replicas of one device book their modelled time on the device's engines
// (compute and link) in turn, so a device named twice never looks faster.
//
// Place in the package graph: simdev implements shard.Replica and
// shard.Topology on top of ref, edge, rf and geom; it is internal and used
// by tests, examples and benchmarks only.
package simdev
