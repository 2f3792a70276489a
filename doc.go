// Package rayd is GPU ray geometry for Go: ray–mesh intersection, specular
// reflection chains and visibility over triangle meshes, on NVIDIA GPUs
// through the CUDA driver API, without cgo.
//
// A Scene is built from meshes on one device (NewScene). Queries take host
// slices (the convenience path: Intersect, TraceReflections, Visible) or
// device-resident buffers (the fast path: IntersectInto and friends, which
// allocate nothing per call). Every query takes a context first; a *Scene is
// safe for concurrent queries, and UpdateVertices refits dynamic meshes
// between them.
//
// Backends: BackendCUDA runs rayd-go's own GPU BVH (built on the device);
// BackendCPU is the pure-Go reference, used as the oracle in tests and as a
// slow fallback when no GPU driver is present. BackendAuto (the default)
// picks CUDA when a device can be opened and otherwise falls back to the CPU
// loudly (a warning through log/slog and Scene.Backend reporting it).
//
// Semantics follow RayD's operation contract: misses report t = +Inf (1e8 in
// reflection slots) and id -1, non-finite rays are misses, inactive rows
// produce exactly the miss record, and empty batches return empty results
// without a launch.
package rayd
