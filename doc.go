// Package rayd is GPU ray geometry for Go: ray–mesh intersection, specular
// reflection chains, visibility and its variants, every hit along a segment
// (Crossings), nearest-edge queries, their gradients and RF-style grid
// accumulation over triangle meshes, on one or many NVIDIA GPUs through the
// CUDA driver API, without cgo.
//
// A Scene is built from meshes (NewScene). Queries take host slices (the
// convenience path: Intersect, TraceReflections, Visible, NearestEdge, …)
// or device-resident buffers (the fast path: IntersectInto and friends,
// which allocate nothing per call). Every query takes a context first; a
// *Scene is safe for concurrent queries, and UpdateVertices refits dynamic
// meshes between them.
//
// The Scene is a façade over one engine (see ARCHITECTURE.md): it validates
// every call once and runs it on the scene's engine — the pure-Go CPU
// references (BackendCPU, the oracle of the tests), one CUDA device
// (BackendCUDA, rayd-go's own GPU BVH; BackendOptiX on GPUs with RT cores),
// or a replicated layer over several devices (WithDevices), which shards
// every operation across its GPUs. An engine that cannot run an operation
// returns an error matching ErrUnsupported; none answers through another
// backend. BackendAuto (the default) picks the best GPU backend when a
// device opens and otherwise falls back to the CPU reference, with one
// warning per process through log/slog (Scene.Backend reports it).
//
// Errors match the package's sentinels with errors.Is: ErrInvalidArgument,
// ErrInvalidMesh, ErrLength, ErrTooLarge, ErrWrongDevice, ErrClosed,
// ErrBackendUnavailable, ErrMultiDeviceUnavailable, ErrPoisoned and
// ErrUnsupported.
//
// Semantics follow RayD's operation contract: misses report t = +Inf (1e8 in
// reflection slots) and id -1, non-finite rays are misses, inactive rows
// produce exactly the miss record, and empty batches return empty results
// without a launch.
package rayd
