// Package launch is rayd-go's device runtime: it opens devices (primary
// context retained, an executor goroutine locked to its own OS thread),
// creates non-blocking streams and events, owns typed device buffers, caches
// one module per device for every module it loads (digest verified by
// package ptx) and launches kernels after validating the arguments against
// the manifest's parameter layout. Columns packs separate buffers into one
// contiguous buffer and unpacks it again, one launch each way, so that a
// record of many columns crosses devices in one copy.
//
// Modules load lazily, on the first Kernel of each (or LoadModule): a
// module is loaded from its prebuilt cubin when the manifest has one for
// exactly the device's architecture (sm_XX = compute capability major*10 +
// minor), else from its PTX, which the driver JIT-compiles. RAYD_PTX_JIT=1
// (EnvPTXJIT) forces the PTX on devices opened while it is set. A cubin that
// fails its digests is refused, never replaced by the PTX; one the driver
// refuses falls back to the PTX with the reason recorded. Device.ModuleLoads
// and ModuleLoadsSince say, per module, which image was used and what the
// verification and cuModuleLoadDataEx took.
//
// Every driver call is issued on a goroutine locked to its OS thread with the
// device's primary context current: either on the device's executor (Do) or,
// for short calls such as a launch or a copy, on the caller's goroutine,
// locked for the duration of the call (that binding costs one cuCtxSetCurrent
// and no goroutine hand-off). Devices are independent: different goroutines
// drive different devices concurrently, and a Device is safe for concurrent
// use.
//
// launch sits above driver and ptx and below accel (ARCHITECTURE.md). Of
// the library packages only launch and dist (NCCL) import driver; every
// device operation of the layers above goes through launch.
package launch
