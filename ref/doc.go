// Package ref is the CPU reference of rayd-go: a straightforward, exact
// implementation of intersect (closest hit), trace_reflections (specular
// chains), visible (segment occlusion), crossings (every hit along a
// segment, the k least kept) and closest points (the nearest face to a
// point) over the scene-global tables of package geom. It is the
// oracle that the GPU kernels are tested against and the slow fallback
// device that runs when no GPU is present.
//
// Every ray/triangle decision goes through geom.Watertight, and among all
// accepted hits the closest query keeps the smallest t, ties broken by the
// lowest global prim id — the rule of the CUDA BVH traverser. A Scene can
// answer through a binned-SAH BVH (leaves of at most four triangles, culled
// with a padded float64 slab test that never rejects a box holding an
// acceptable hit) or by brute force over every triangle; both give
// bit-identical answers.
//
// The closest-point query computes every point–triangle distance in
// float64 from the float32 vertices (Ericson's region classification, with
// slivers, segments and points answered through their edges) and keeps
// the least squared distance, ties broken by the lowest global face id.
// Through the BVH it skips a node only when the node box's squared
// distance exceeds the best by a margin larger than any rounding of the
// candidates, so it too answers exactly like brute force. WindingNumbers
// gives the generalized winding number of the faces around each point (a
// sum of signed solid angles, by brute force), with which a caller signs
// the distances of a closed or nearly closed mesh; WindingSumsContext gives
// its float64 sums before the division. CrossingCounts is the count of the
// crossings query along the parity segment of each point (geom.ParityEnd),
// the parity definition every engine answers with its own crossings query.
//
// Batches are split into blocks of 256 rows that run on up to
// runtime.GOMAXPROCS goroutines. The *Context variants of the queries
// (IntersectContext, TraceReflectionsContext, VisibleContext,
// SegmentBlockersContext, CrossingsContext, ClosestPointsContext, WindingNumbersContext) and
// NewSceneContext check their context between blocks (between the splits of
// large subtrees while building) and return an error wrapping ctx.Err() once it is done; the
// plain methods run with context.Background(). Work sized by the caller is
// bounded before anything is allocated: trace_reflections refuses a bounce
// count above geom.MaxBounces and a record larger than
// geom.HostMemoryLimit().
//
// ref imports only geom, the row scheduler internal/par and the standard
// library.
package ref
