// Package accel holds rayd-go's device acceleration structures and the
// launchers of every query kernel: the OptiX tracer (OptiX builds the GAS;
// see optix.go) and rayd-go's own triangle BVH: the device build and
// refit (ptx/src/bvh_build.cu), the query launchers for intersect,
// trace_reflections and visible (ptx/src/trace.cu) and the segment blockers
// of the visibility variants (ptx/src/visibility.cu), and a host mirror of
// the build. EdgeBVH runs the same build over one degenerate triangle per
// edge and answers the nearest-edge queries and their VJPs in float64
// (ptx/src/edge.cu, edge_vjp.cu), bit for bit as package edge's scan.
//
// The RF kernels (accumulations and paths) run over the BVH too.
//
// Intersect also comes in two halves for moving hits between devices:
// IntersectCompact writes a 16-byte record per row {t, u, v, slot} and
// ExpandHits rebuilds the full record from it on any BVH built from the
// same tables with the same Options, through the kernels' one epilogue, so
// the result is bitwise Intersect's (compact.go).
//
// A Reorderer runs Intersect on the rays sorted by direction octant and
// origin Morton code (keys, RadixSort, gather; ptx/src/reorder.cu) and
// scatters the record back to ray order, bit for bit Intersect's; the
// geometry benchmark measures it end to end, and it does not pay for the
// full record (reorder.go).
//
// Place in the graph (ARCHITECTURE.md): engine/cuda, replica → accel →
// launch → ptx/driver. accel imports launch, geom, edge (the pure edge
// table) and rf (the RF records) only; it never imports driver or unsafe.
// Everything it launches is an embedded PTX module reached through
// launch.Device.Kernel.
//
// # Algorithm
//
// A Karras linear BVH (spec §8.1, with Morton codes of the face-box
// centroids normalized by the centroid bounds) is built in one stream with
// no host synchronization between kernels: face boxes and scene bounds by
// integer atomics on order-preserving keys, 30-bit Morton codes, a stable
// 8-bit LSD radix sort of (code, prim) pairs (RadixSort runs the same sort
// on a caller's buffers), the radix tree, a bottom-up pass (boxes, SAH
// costs, leaf choices, heights) with one atomic counter per internal node,
// and a collapse that turns subtrees of ≤ Options.MaxLeafSize triangles
// into leaves where the SAH says so. The result is emitted in one
// of two 64-byte node layouts (Options.Width): child-pair nodes (both
// children's full-precision boxes and references, Aila–Laine), or quad
// nodes that hold up to four 8-bit quantized child boxes (two binary levels
// per node: half the node fetches and half the bytes per ray). A third
// layout, Width 8, holds compressed wide nodes of 80 bytes (Ylitie, Karras
// and Laine, HPG 2017): the binary tree is collapsed breadth first into
// nodes of up to eight quantized children in ray-octant slots, with node and
// triangle groups addressed from two base indices, and the triangle records
// are reordered so each node's leaves are contiguous (WideNode). Triangles
// are 48-byte records in leaf order; see Layout and QuadNode. Stored boxes are
// inflated by a tiny relative margin (InflateScale; quantized boxes are
// rounded outward from the inflated ones), and the traversal adds the same
// margin of the ray origin's magnitude, so that box culling never rejects a
// box holding a hit the watertight test accepts: BVH traversal answers
// exactly like a brute-force loop.
//
// The traversal (one thread per ray; optionally persistent warps) keeps its
// stack in local memory; a build whose child-pair tree is taller than
// MaxDepth fails with ErrDepthExceeded. A persistent launch (Rays.Counter
// or Segments.Counter set) hands rows to warps either in 32-row batches or
// one row per lane as each lane finishes its own (dynamic fetching, the
// _dyn kernels); Options.Fetch chooses, FetchAuto by query and BVH size.
// The watertight test (geom.Watertight) is transcribed operation by
// operation, so t, barycentrics and normals equal the CPU reference (package
// ref) bit for bit, and equal-t ties go to the lowest global prim id.
//
// # Host mirror
//
// BuildHost runs the same algorithm with the same float32 operation
// sequence on the CPU and yields the identical Layout, so CPU tests cover
// the Morton codes, sort, radix tree, collapse and layout, and GPU tests
// compare a downloaded device build with it bit for bit. Validate checks the
// invariants of any layout; Layout.Closest and AnyHit mirror the device
// traversal (and count its work in TraceStats); Layout.IntersectCompact and
// ExpandHits mirror the compact records.
package accel
