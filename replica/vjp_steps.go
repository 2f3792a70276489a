package replica

import (
	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// The backward passes of package shard on a CUDA replica. A chunk's rays
// (or points), its tape (the forward's winner: a global prim id and
// optional (u, v) per row, or a frozen global edge id) and its cotangents
// are uploaded on in; the launch writes the per-row gradients and the
// chunk's vertex-gradient partial, a fixed column of 3 values per
// scene-global vertex that the kernel launcher zeroes before the rows add
// into it (atomics: the partial's last bits depend on the order rows land
// in). A remote gathers both to the master like any output; Result
// downloads them into the chunk record, and shard sums the partials of a
// sharded call in row-chunk order. The intersect VJP reads the replica's
// triangle BVH geometry, the edge VJPs its edge BVH's: both the vertices of
// the last SyncGeometry.

func intersectVJPJob(t *shard.IntersectVJP) *job {
	g := t.G
	p := func(v []float32, per int) int { return per * present(v) }
	in := layout{
		f32: []spec{col("o", 3), col("d", 3), col("uv", p(t.UV, 2)), col("cotangent t", p(g.T, 1)),
			col("cotangent p", p(g.P, 3)), col("cotangent n", p(g.N, 3)), col("cotangent geo_n", p(g.GeoN, 3)),
			col("cotangent uv", p(g.UV, 2)), col("cotangent barycentric", p(g.Bary, 3))},
		i32: []spec{col("prim", 1)},
		u8:  []spec{col("active", present(t.Active))},
	}
	nv := 3 * t.Vertices
	return &job{key: shard.OpIntersectVJP, in: in, vertices: t.Vertices,
		host: hostIn{f32: [][]float32{t.O, t.D, t.UV, g.T, g.P, g.N, g.GeoN, g.UV, g.Bary}, i32: [][]int32{t.Prim},
			u8: [][]bool{t.Active}},
		out: layout{f32: []spec{col("origins", 3), col("directions", 3), fixedCol("vertices", nv)}},
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			f := in.f32
			return k.bvh.IntersectVJP(s, accel.Rays{O: f[0], D: f[1], Active: in.u8[0], N: n},
				accel.Tape{Prim: in.i32[0], UV: f[2]},
				accel.Cotangents{T: f[3], P: f[4], N: f[5], GeoN: f[6], UV: f[7], Bary: f[8]},
				accel.Grads{Origins: out.f32[0], Directions: out.f32[1], Vertices: out.f32[2]})
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			n := hi - lo
			r := &shard.IntersectGrads{Origins: make([]float32, 3*n), Directions: make([]float32, 3*n),
				Vertices: make([]float32, nv)}
			return r, download(s, out.f32, [][]float32{r.Origins, r.Directions, r.Vertices})
		}}
}

// optF64 is the width multiplier of an optional float64 cotangent.
func optF64(v []float64, per int) int { return per * present(v) }

func edgePointVJPJob(t *shard.NearestEdgeVJP) *job {
	g := t.G
	nv := 3 * t.Vertices
	return &job{key: shard.OpNearestEdgeVJP, vertices: t.Vertices, edges: true,
		in: layout{f32: []spec{col("points", 3)}, i32: []spec{col("global_edge_id", 1)},
			f64: []spec{col("cotangent distance", optF64(g.Distance, 1)), col("cotangent edge_point", optF64(g.EdgePoint, 3)),
				col("cotangent edge_t", optF64(g.EdgeT, 1))}},
		host: hostIn{f32: [][]float32{t.Points}, i32: [][]int32{t.GlobalEdgeID},
			f64: [][]float64{g.Distance, g.EdgePoint, g.EdgeT}},
		out: layout{f64: []spec{col("points", 3), fixedCol("vertices", nv)}},
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			if n == 0 {
				return zeroPartial(s, out.f64[1])
			}
			return k.edges.PointVJP(s, in.f32[0], in.i32[0], n,
				accel.EdgePointGrad{Distance: in.f64[0], EdgePoint: in.f64[1], EdgeT: in.f64[2]}, out.f64[0], out.f64[1])
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			r := &shard.EdgePointGrads{Points: make([]float64, 3*(hi-lo)), Vertices: make([]float64, nv)}
			return r, download(s, out.f64, [][]float64{r.Points, r.Vertices})
		}}
}

func edgeRayVJPJob(t *shard.NearestEdgeRayVJP) *job {
	g := t.G
	nv := 3 * t.Vertices
	return &job{key: shard.OpNearestEdgeRayVJP, vertices: t.Vertices, edges: true,
		in: layout{f32: []spec{col("o", 3), col("d", 3), col("tmax", present(t.TMax))}, i32: []spec{col("global_edge_id", 1)},
			f64: []spec{col("cotangent distance", optF64(g.Distance, 1)), col("cotangent ray_t", optF64(g.RayT, 1)),
				col("cotangent point", optF64(g.Point, 3)), col("cotangent edge_t", optF64(g.EdgeT, 1)),
				col("cotangent edge_point", optF64(g.EdgePoint, 3))}},
		host: hostIn{f32: [][]float32{t.O, t.D, t.TMax}, i32: [][]int32{t.GlobalEdgeID},
			f64: [][]float64{g.Distance, g.RayT, g.Point, g.EdgeT, g.EdgePoint}},
		out: layout{f64: []spec{col("origins", 3), col("directions", 3), fixedCol("vertices", nv)}},
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			if n == 0 {
				return zeroPartial(s, out.f64[2])
			}
			f := in.f64
			return k.edges.RayVJP(s, accel.Rays{O: in.f32[0], D: in.f32[1], TMax: in.f32[2], N: n}, in.i32[0],
				accel.EdgeRayGrad{Distance: f[0], RayT: f[1], Point: f[2], EdgeT: f[3], EdgePoint: f[4]},
				out.f64[0], out.f64[1], out.f64[2])
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			n := hi - lo
			r := &shard.EdgeRayGrads{Origins: make([]float64, 3*n), Directions: make([]float64, 3*n),
				Vertices: make([]float64, nv)}
			return r, download(s, out.f64, [][]float64{r.Origins, r.Directions, r.Vertices})
		}}
}

// zeroPartial zeroes the vertex partial of a chunk without rows (the edge
// VJP launchers are not called for it).
func zeroPartial(s *launch.Stream, dv *launch.Buffer[float64]) error {
	if dv == nil || dv.Len() == 0 {
		return nil
	}
	return dv.Memset8(s, 0)
}
