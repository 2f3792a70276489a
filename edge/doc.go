// Package edge builds the edge topology of a scene (spec §1.3) and holds the
// CPU brute-force reference of the nearest-edge queries of spec §5:
// nearest edge to a point (NearestPoint), nearest edge to a ray or segment
// (NearestRay), the k nearest edges to a point (NearestK), and the
// vector-Jacobian products of the point and ray queries with the edge id and
// the clamped parameters frozen (NearestPointVJP, NearestRayVJP).
//
// Topology derives one structure-of-arrays edge table from the scene-global
// geom.Tables. Edges are numbered per mesh in ascending (min, max) vertex key
// order and concatenated over the meshes in mesh order; meshes with
// EdgesDisabled contribute none. A key shared by k > 2 faces (a non-manifold
// edge) yields k(k−1)/2 edges, one per pair of incident faces.
//
// A query scans every edge when the batch is small and otherwise builds an
// Index, a bounding volume hierarchy over the edge segments whose traversal
// prunes only nodes provably farther than the current best: its answers are
// the scan's, bit for bit (the GPU edge BVH follows the same rule).
//
// The queries compute in float64 and round their results once to float32.
// Among equally distant edges the lowest global edge id wins, so results are
// deterministic. An optional edge mask (length E, false = masked) removes
// edges from every query; an optional active slice (length N) and any
// non-finite query coordinate turn a row into the miss record of spec §0.3:
// distance +Inf, ids −1, vectors and parameters 0.
//
// Validation failures are reported with the error types of geom: a
// *geom.LengthError (errors.Is geom.ErrLength) for a slice of the wrong
// length and a *geom.ArgumentError (errors.Is geom.ErrInvalidArgument) for
// an argument outside its domain, such as k outside [1, MaxK].
//
// Rows run in blocks on up to GOMAXPROCS goroutines. The *Context variants
// (NearestPointContext, NearestRayContext, NearestKContext) check their
// context between blocks and return an error wrapping ctx.Err() once it is
// done; the plain methods run with context.Background(). NearestK checks
// its N × k record against geom.HostMemoryLimit() before allocating it
// (CheckTopK).
//
// edge imports only the standard library, geom and the row scheduler
// internal/par.
package edge
