package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// EdgePointGrad holds the upstream gradients of a point query; each field
// is nil (zero) or holds one value per row (EdgePoint: 3).
type EdgePointGrad struct {
	Distance, EdgePoint, EdgeT *launch.Buffer[float64]
}

// EdgeRayGrad holds the upstream gradients of a ray query; each field is nil
// (zero) or holds one value per row (Point, EdgePoint: 3).
type EdgeRayGrad struct {
	Distance, RayT, Point, EdgeT, EdgePoint *launch.Buffer[float64]
}

// numVerts is the vertex count of the BVH's geometry (0 without edges).
func (b *EdgeBVH) numVerts() int {
	if b.bvh == nil {
		return 0
	}
	return b.bvh.geo.Vertices.Len() / 3
}

// PointVJP queues the backward pass of a point query (spec §5.7) with the
// edge of every row frozen to gid (−1: the row missed and contributes
// nothing): dp (3 per row) is overwritten, dv (3 per global vertex) is
// zeroed and receives the endpoint gradients. Vertex positions are the
// BVH's current ones.
func (b *EdgeBVH) PointVJP(s *launch.Stream, points *launch.Buffer[float32], gid *launch.Buffer[int32], n int,
	g EdgePointGrad, dp, dv *launch.Buffer[float64]) error {
	if n < 0 || n > 1<<31-1-EdgeThreads {
		return fmt.Errorf("accel: row count %d out of range", n)
	}
	if err := firstErr(need("points", points, 3*n), need("gid", gid, n), needLen("Distance", g.Distance, n),
		needLen("EdgePoint", g.EdgePoint, 3*n), needLen("EdgeT", g.EdgeT, n), need("dp", dp, 3*n),
		need("dv", dv, 3*b.numVerts())); err != nil {
		return err
	}
	return b.pointVJP(streamRunner{s}, points, gid, n, g, dp, dv)
}

// pointVJP launches a checked point backward pass.
func (b *EdgeBVH) pointVJP(r runner, points *launch.Buffer[float32], gid *launch.Buffer[int32], n int,
	g EdgePointGrad, dp, dv *launch.Buffer[float64]) error {
	if err := r.zero(dv); err != nil {
		return err
	}
	if n == 0 || b.bvh == nil {
		return r.zero(dp)
	}
	grid, blk := threads1D(n, EdgeThreads)
	return r.launch(ModuleEdgeVJP, "rayd_edge_point_vjp", grid, blk, b.bvh.geo.Vertices, b.v0, b.v1,
		int32(b.numEdges), points, gid, nullable(g.Distance), nullable(g.EdgePoint), nullable(g.EdgeT), int32(n), dp, dv)
}

// RayVJP queues the backward pass of a ray query (spec §5.7): do and dd
// (3 per row) are overwritten, dv is zeroed and receives the endpoint
// gradients; tmax gets no gradient. r.Active and r.Counter are ignored.
func (b *EdgeBVH) RayVJP(s *launch.Stream, r Rays, gid *launch.Buffer[int32], g EdgeRayGrad, do, dd, dv *launch.Buffer[float64]) error {
	n := r.N
	if err := firstErr(r.check(), need("gid", gid, n), needLen("Distance", g.Distance, n), needLen("RayT", g.RayT, n),
		needLen("Point", g.Point, 3*n), needLen("EdgeT", g.EdgeT, n), needLen("EdgePoint", g.EdgePoint, 3*n),
		need("do", do, 3*n), need("dd", dd, 3*n), need("dv", dv, 3*b.numVerts())); err != nil {
		return err
	}
	return b.rayVJP(streamRunner{s}, r, gid, g, do, dd, dv)
}

// rayVJP launches a checked ray backward pass.
func (b *EdgeBVH) rayVJP(rn runner, r Rays, gid *launch.Buffer[int32], g EdgeRayGrad, do, dd, dv *launch.Buffer[float64]) error {
	n := r.N
	if err := rn.zero(dv); err != nil {
		return err
	}
	if n == 0 || b.bvh == nil {
		return firstErr(rn.zero(do), rn.zero(dd))
	}
	grid, blk := threads1D(n, EdgeThreads)
	return rn.launch(ModuleEdgeVJP, "rayd_edge_ray_vjp", grid, blk, b.bvh.geo.Vertices, b.v0, b.v1,
		int32(b.numEdges), r.O, r.D, nullable(r.TMax), gid, nullable(g.Distance), nullable(g.RayT),
		nullable(g.Point), nullable(g.EdgeT), nullable(g.EdgePoint), int32(n), do, dd, dv)
}
