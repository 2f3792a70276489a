// Package shard is rayd-go's replicated multi-device layer: it decides how a
// query is split across devices and drives the devices through that split.
//
// Planning is pure arithmetic over host values. Plan validates a device list
// and Options (in the order of the multi-device spec, with typed errors) and
// decides who gets a Layer. A Layer resolves the weights of an operation
// (exact key, then family, then base weights), cuts per_ray batches into row
// shards (float64 truncation, the last device taking the remainder) and
// grid_reduce lane spaces into warp-aligned windows, applies the
// transfer-aware small-work floor to every remote shard, and picks a
// dispatch: master, sharded, pipelined or chunked (lane-sharded or
// lane-chunked for grid_reduce). Chunk plans honour ChunkRays, the
// pipeline's chunks per device and the memory budget, which charges up to
// three resident chunks per device and the fixed returned output, and
// refuses an impossible budget before any launch. LastDispatch and
// LastChunkPlan expose the decision of the latest call. ValidateOptions
// runs the checks of Plan that need no topology (options without devices,
// the device list's shape, every option field), so a caller can refuse bad
// options before it probes the devices. The planner entry points
// (SizeChunk, PlanRows, PlanLanes) validate what they divide by and return
// a *PlanError instead; RowShards and LaneShards give everything to the
// first device when their weights fail CheckWeights.
//
// Execution goes through the Replica interface, one replica per device:
// scatter a chunk's rows from the master, launch, gather the outputs back,
// retire chunks in issue order into a row-ordered result or the Offload
// hook, or fold lane chunks per device and sum the partials on the master in
// device order (replicas that keep a grid_reduce call resident on their
// devices run it through ResidentLanes instead). Every step enqueues work and returns an Event, so a device
// implementation keeps copies and launches asynchronous on its streams; the
// layer waits only when it hands a chunk out. Cancellation is honoured at
// chunk boundaries. Broadcast mutations keep the replicas' versions in
// lockstep; a failure that may have left them diverged poisons the layer and
// every later call refuses with a *PoisonedError until Build succeeds.
//
// Place in the package graph (ARCHITECTURE.md): engine/replicated → shard;
// replica and internal/simdev implement its Replica interface. shard
// imports only geom, edge and rf (host records and validation errors) and
// the standard library; it never imports driver, launch or accel, so all of it
// runs and is tested without a GPU. The replica package implements Replica
// on CUDA devices; internal/simdev implements it on simulated devices that
// run the CPU reference.
package shard
