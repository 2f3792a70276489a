package accel

import (
	"fmt"
	"slices"

	"github.com/rayd-go/rayd/launch"
)

// EdgePoints is a device-resident batch of N query points.
type EdgePoints struct {
	P      *launch.Buffer[float32] // 3N
	Active *launch.Buffer[uint8]   // N, or nil (all active)
	N      int
}

// EdgePointOut is the device NearestPointEdge record (spec §5.1); every
// field is required (3 values per row for EdgePoint).
type EdgePointOut struct {
	Distance, EdgePoint, EdgeT    *launch.Buffer[float32]
	ShapeID, EdgeID, GlobalEdgeID *launch.Buffer[int32]
}

// EdgeRayOut is the device NearestRayEdge record (spec §5.2); every field is
// required (3 values per row for Point and EdgePoint).
type EdgeRayOut struct {
	Distance, RayT, Point, EdgeT, EdgePoint *launch.Buffer[float32]
	ShapeID, EdgeID, GlobalEdgeID           *launch.Buffer[int32]
}

// EdgeTopKOut is the device NearestEdgesTopK record (spec §5.3), N·k slots
// (3 values per slot for Point and EdgePoint); every field is required.
type EdgeTopKOut struct {
	Valid, Boundary               *launch.Buffer[uint8]
	Distance, Point, EdgeT        *launch.Buffer[float32]
	EdgePoint                     *launch.Buffer[float32]
	ShapeID, EdgeID, GlobalEdgeID *launch.Buffer[int32]
}

func (q *EdgePoints) check() error {
	if q.N < 0 || q.N > 1<<31-1-EdgeThreads {
		return fmt.Errorf("accel: query count %d out of range", q.N)
	}
	if q.P == nil {
		return fmt.Errorf("accel: EdgePoints.P is required")
	}
	return firstErr(needLen("EdgePoints.P", q.P, 3*q.N), needLen("EdgePoints.Active", q.Active, q.N))
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// need checks that every output is present and holds per·n elements.
func need[T launch.Elem](what string, b *launch.Buffer[T], want int) error {
	if b == nil {
		return fmt.Errorf("accel: %s is required", what)
	}
	return needLen(what, b, want)
}

func (o *EdgePointOut) check(n int) error {
	return firstErr(need("Distance", o.Distance, n), need("EdgePoint", o.EdgePoint, 3*n), need("EdgeT", o.EdgeT, n),
		need("ShapeID", o.ShapeID, n), need("EdgeID", o.EdgeID, n), need("GlobalEdgeID", o.GlobalEdgeID, n))
}

func (o *EdgeRayOut) check(n int) error {
	return firstErr(need("Distance", o.Distance, n), need("RayT", o.RayT, n), need("Point", o.Point, 3*n),
		need("EdgeT", o.EdgeT, n), need("EdgePoint", o.EdgePoint, 3*n),
		need("ShapeID", o.ShapeID, n), need("EdgeID", o.EdgeID, n), need("GlobalEdgeID", o.GlobalEdgeID, n))
}

func (o *EdgeTopKOut) check(m int) error {
	return firstErr(need("Valid", o.Valid, m), need("Boundary", o.Boundary, m), need("Distance", o.Distance, m),
		need("Point", o.Point, 3*m), need("EdgeT", o.EdgeT, m), need("EdgePoint", o.EdgePoint, 3*m),
		need("ShapeID", o.ShapeID, m), need("EdgeID", o.EdgeID, m), need("GlobalEdgeID", o.GlobalEdgeID, m))
}

// tree returns the node and record arguments (Null without edges).
func (b *EdgeBVH) tree() (nodes, recs any) {
	if b.bvh == nil {
		return launch.Null, launch.Null
	}
	return b.bvh.nodes, b.bvh.tris
}

// NearestPoint queues the nearest enabled edge of every point (spec §5.1,
// CUDA edge backend: no radius cap, ties to the lowest global edge id)
// through the BVH on s.
func (b *EdgeBVH) NearestPoint(s *launch.Stream, q EdgePoints, out EdgePointOut) error {
	if err := firstErr(q.check(), out.check(q.N)); err != nil {
		return err
	}
	return b.pointQuery(streamRunner{s}, "rayd_edge_nearest_point", q, out)
}

// BrutePoint is NearestPoint by scanning every edge for every row: the
// device check of the BVH kernels (same results, bit for bit).
func (b *EdgeBVH) BrutePoint(s *launch.Stream, q EdgePoints, out EdgePointOut) error {
	if err := firstErr(q.check(), out.check(q.N)); err != nil {
		return err
	}
	return b.pointQuery(streamRunner{s}, "rayd_edge_brute_point", q, out)
}

// pointQuery launches a checked point query.
func (b *EdgeBVH) pointQuery(r runner, entry string, q EdgePoints, out EdgePointOut) error {
	if q.N == 0 {
		return nil
	}
	nodes, recs := b.tree()
	grid, blk := threads1D(q.N, EdgeThreads)
	args := []any{recs, int32(b.numEdges), nullable(b.mask), q.P, nullable(q.Active), int32(q.N),
		out.Distance, out.EdgePoint, out.EdgeT, out.ShapeID, out.EdgeID, out.GlobalEdgeID}
	if entry == "rayd_edge_nearest_point" {
		args = append([]any{nodes}, args...)
	}
	return r.launch(ModuleEdge, entry, grid, blk, args...)
}

// EdgeRayKernel selects one of the nearest-edge ray kernels of the edge BVH.
// Both return the brute-force scan's records bit for bit; they differ in
// how they prune.
type EdgeRayKernel int

const (
	// EdgeRayAuto is what NearestRay runs: EdgeRaySpec for rays with a
	// TMax (segments, or a mix of segments and half rays) and for any rays
	// on an edge BVH of fewer than EdgeRaySpecBelow edges; EdgeRayOps for
	// half rays (a nil TMax) on a larger one.
	EdgeRayAuto EdgeRayKernel = -1
	// EdgeRayPruned is rayd_edge_nearest_ray: float32 node and edge tests
	// (ptx/src/edge_prune.cuh) that never drop an edge the brute force could
	// pick, the float64 closest pair for the edges they keep, lanes that take
	// a new row as soon as they finish one; rows outside the tests' range
	// are answered by rayd_edge_nearest_ray_deferred, queued after it. The
	// other float32-pruned kernels (rows, phased, phased_top, ops, spec) walk the
	// same way and defer the same rows; they differ in how a warp's lanes
	// share the work.
	EdgeRayPruned EdgeRayKernel = iota
	// EdgeRayPrunedRows is rayd_edge_nearest_ray_rows: EdgeRayPruned's walk
	// with one thread per row.
	EdgeRayPrunedRows
	// EdgeRayExact is rayd_edge_nearest_ray_exact: the float64 squared
	// distance from the query to every child box (edge.RayBoxBound), one
	// thread per row.
	EdgeRayExact
	// EdgeRayPhased is rayd_edge_nearest_ray_phased: EdgeRayPruned's walk
	// and records, with a warp's idle lanes refilled together and each step
	// split into a node phase (every busy lane opens nodes up to its next
	// leaf) and a leaf phase, so that fewer lanes of a warp wait on code the
	// others run.
	EdgeRayPhased
	// EdgeRayPhasedTop is rayd_edge_nearest_ray_phased_top: EdgeRayPhased
	// with the top of each lane's traversal stack kept in registers, so that
	// popping the child just pushed reads no memory.
	EdgeRayPhasedTop
	// EdgeRayOps is rayd_edge_nearest_ray_ops: EdgeRayPruned's walk and
	// records, each lane's row advancing one operation at a time (opening a
	// node, testing a record, the float64 closest pair of a record that
	// passed), the warp running in each iteration the kind of operation the
	// most lanes can run; the top of each stack in registers as in
	// EdgeRayPhasedTop.
	EdgeRayOps
	// EdgeRaySpec is rayd_edge_nearest_ray_spec: EdgeRayPhased's walk and
	// records with speculative node phases: a lane that reaches a live leaf
	// holds it and goes on opening nodes while other lanes of its warp still
	// search, so a node phase is no longer as long as the warp's longest run
	// of nodes between two leaves (ptx/src/edge_spec.cuh); its leaf phase
	// tests all of a leaf's records, two at a time, before their float64
	// pairs run. NearestRay runs it on small edge BVHs and for segments.
	EdgeRaySpec
)

// EdgeRayKernels lists the ray kernels.
var EdgeRayKernels = []EdgeRayKernel{EdgeRayAuto, EdgeRayPruned, EdgeRayPrunedRows, EdgeRayExact, EdgeRayPhased,
	EdgeRayPhasedTop, EdgeRayOps, EdgeRaySpec}

// EdgeRaySpecBelow is the edge count below which NearestRay runs
// EdgeRaySpec rather than EdgeRayOps for half rays. Measured on an H200,
// 4,194,304 rows, kernels interleaved (benchmarks/results/edges-h200-kernels.json):
// on 109,825 edges, where every row opens a few dozen nodes and its leaves
// come often, the speculative kernel is the fastest for both ray kinds; on
// 6,291,456 edges, where rows open far more nodes, it runs segments 6%
// faster than the ops kernel (46.3 against 49.2 ms at 4e3b710) and half
// rays 1% slower (80.2 against 79.1 ms), so segments always take it and
// half rays only below this size.
const EdgeRaySpecBelow = 1 << 20

// String names the kernel ("auto", "pruned", "rows", "exact", "phased",
// "phased_top", "ops", "spec").
func (k EdgeRayKernel) String() string {
	switch k {
	case EdgeRayAuto:
		return "auto"
	case EdgeRayPrunedRows:
		return "rows"
	case EdgeRayExact:
		return "exact"
	case EdgeRayPhased:
		return "phased"
	case EdgeRayPhasedTop:
		return "phased_top"
	case EdgeRayOps:
		return "ops"
	case EdgeRaySpec:
		return "spec"
	}
	return "pruned"
}

// entry is the kernel's PTX entry.
func (k EdgeRayKernel) entry() string {
	switch k {
	case EdgeRayPrunedRows:
		return "rayd_edge_nearest_ray_rows"
	case EdgeRayExact:
		return "rayd_edge_nearest_ray_exact"
	case EdgeRayPhased:
		return "rayd_edge_nearest_ray_phased"
	case EdgeRayPhasedTop:
		return "rayd_edge_nearest_ray_phased_top"
	case EdgeRayOps:
		return "rayd_edge_nearest_ray_ops"
	case EdgeRaySpec:
		return "rayd_edge_nearest_ray_spec"
	}
	return "rayd_edge_nearest_ray"
}

// NearestRay queues the enabled edge nearest to every ray's query set (spec
// §5.2, CUDA edge backend): the segment o + t·d, t ∈ [0, max(tmax, 0)] for a
// finite tmax, the half ray for +Inf or a nil TMax. r.Counter is ignored.
// It runs EdgeRayAuto.
func (b *EdgeBVH) NearestRay(s *launch.Stream, r Rays, out EdgeRayOut) error {
	return b.NearestRayWith(s, r, out, EdgeRayAuto)
}

// RayKernel is the kernel k stands for on this BVH (EdgeRayAuto resolved)
// for rays with a TMax (segments true) or half rays (a nil TMax).
func (b *EdgeBVH) RayKernel(k EdgeRayKernel, segments bool) EdgeRayKernel {
	if k != EdgeRayAuto {
		return k
	}
	if segments || b.numEdges < EdgeRaySpecBelow {
		return EdgeRaySpec
	}
	return EdgeRayOps
}

// NearestRayWith is NearestRay by kernel k (every kernel gives the same
// records bit for bit; they differ in speed).
func (b *EdgeBVH) NearestRayWith(s *launch.Stream, r Rays, out EdgeRayOut, k EdgeRayKernel) error {
	if !slices.Contains(EdgeRayKernels, k) {
		return fmt.Errorf("accel: unknown edge ray kernel %d", int(k))
	}
	k = b.RayKernel(k, r.TMax != nil)
	if err := firstErr(r.check(), out.check(r.N)); err != nil {
		return err
	}
	return b.rayQuery(streamRunner{s}, k.entry(), r, out)
}

// BruteRay is NearestRay by scanning every edge for every row.
func (b *EdgeBVH) BruteRay(s *launch.Stream, r Rays, out EdgeRayOut) error {
	if err := firstErr(r.check(), out.check(r.N)); err != nil {
		return err
	}
	return b.rayQuery(streamRunner{s}, "rayd_edge_brute_ray", r, out)
}

// edgeRayRowsPerLane is the mean number of rows each lane of the persistent
// kernels (rayd_edge_nearest_ray, _phased, _phased_top, _ops, _spec) takes (the
// kernels split the rows evenly over the grid's warps, any grid size, and
// their lanes refill from their warp's share): enough rows that a warp is
// not held by its longest one, blocks enough that the hardware balances them
// over the SMs. The speculative kernel takes edgeRaySpecRowsPerLane: in
// screens of its walk on the light grid (4,194,304 rows, one H200), 16 rows
// ran segments and half rays 2-3% faster than 8, and 32 about 1% faster
// than 16 (segments 7.43 against 7.51 ms, half rays 7.89 against 7.94 with
// the leaf batches; with leaf pairs, 64 rows ran as 32).
const (
	edgeRayRowsPerLane     = 8
	edgeRaySpecRowsPerLane = 32
)

// persistentBlocks is the grid of a persistent ray kernel over n rows:
// ceil(n / (rpl·EdgeThreads)) blocks of EdgeThreads, or, when that is fewer
// than the device holds at once (sms × perSM), as many more as give every
// lane a row, so that a small batch still spreads over every SM.
func persistentBlocks(n, rpl, sms, perSM int) launch.Dim3 {
	g := launch.Blocks((n+rpl-1)/rpl, EdgeThreads)
	if fill := uint32(sms * perSM); g.X < fill {
		g.X = min(fill, launch.Blocks(n, EdgeThreads).X)
	}
	return g
}

// edgeRayBlocksPerSM is the number of blocks of entry an SM holds at once
// (the kernels' __launch_bounds__ in ptx/src/edge.cu).
func edgeRayBlocksPerSM(entry string) int {
	switch entry {
	case EdgeRayPhased.entry(), EdgeRayPhasedTop.entry(), EdgeRayOps.entry():
		return 8
	}
	return 4
}

// rayQuery launches a checked ray query: entry, then, after the pruned
// kernels, rayd_edge_nearest_ray_deferred for the rows they leave to the
// float64 walk.
func (b *EdgeBVH) rayQuery(rn runner, entry string, r Rays, out EdgeRayOut) error {
	if r.N == 0 {
		return nil
	}
	nodes, recs := b.tree()
	grid, blk := threads1D(r.N, EdgeThreads)
	args := []any{recs, int32(b.numEdges), nullable(b.mask), r.O, r.D, nullable(r.TMax), nullable(r.Active),
		int32(r.N), out.Distance, out.RayT, out.Point, out.EdgeT, out.EdgePoint, out.ShapeID, out.EdgeID, out.GlobalEdgeID}
	if entry == "rayd_edge_brute_ray" {
		return rn.launch(ModuleEdge, entry, grid, blk, args...)
	}
	args = append([]any{nodes}, args...)
	pruned := entry != EdgeRayExact.entry()
	g := grid
	if entry != EdgeRayPrunedRows.entry() && entry != EdgeRayExact.entry() { // the persistent kernels
		rpl := edgeRayRowsPerLane
		if entry == EdgeRaySpec.entry() {
			rpl = edgeRaySpecRowsPerLane
		}
		sms := 0 // no device: the plain grid
		if b.dev != nil {
			sms = b.dev.SMs()
		}
		g = persistentBlocks(r.N, rpl, sms, edgeRayBlocksPerSM(entry))
	}
	if err := rn.launch(ModuleEdge, entry, g, blk, args...); err != nil || !pruned {
		return err
	}
	return rn.launch(ModuleEdge, "rayd_edge_nearest_ray_deferred", grid, blk, args...)
}

// NearestK queues the k nearest enabled edges of every point (spec §5.3),
// slot j of row i at i·k + j in ascending (distance², global edge id);
// 1 ≤ k ≤ MaxEdgeK.
func (b *EdgeBVH) NearestK(s *launch.Stream, q EdgePoints, k int, out EdgeTopKOut) error {
	if k < 1 || k > MaxEdgeK {
		return fmt.Errorf("accel: k = %d not in [1,%d]", k, MaxEdgeK)
	}
	if err := firstErr(q.check(), out.check(q.N*k)); err != nil {
		return err
	}
	return b.nearestK(streamRunner{s}, q, k, out)
}

// nearestK launches a checked top-k query.
func (b *EdgeBVH) nearestK(r runner, q EdgePoints, k int, out EdgeTopKOut) error {
	if q.N == 0 {
		return nil
	}
	nodes, recs := b.tree()
	grid, blk := threads1D(q.N, EdgeThreads)
	return r.launch(ModuleEdge, "rayd_edge_nearest_k", grid, blk, nodes, recs, int32(b.numEdges), nullable(b.mask),
		nullable(b.boundary), q.P, nullable(q.Active), int32(q.N), int32(k), out.Valid, out.Distance, out.Point,
		out.EdgeT, out.EdgePoint, out.ShapeID, out.EdgeID, out.GlobalEdgeID, out.Boundary)
}
