package replica

import (
	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// The nearest-edge queries of package shard on a CUDA replica: a chunk's
// points (or rays) are uploaded on in, the query runs on the launch stream
// over the replica's own edge BVH (edges.go), and the master downloads the
// record in Result. Every replica builds its edge BVH from its own copy of
// the tables with the same kernels, so each row is bitwise the
// single-device accel.EdgeBVH row.

// pointLayout is the input of the point queries: the points and an
// optional active mask.
func pointLayout(active bool) layout {
	return layout{f32: []spec{col("points", 3)}, u8: []spec{col("active", b2i(active))}}
}

// edgePoints is the query batch of n rows of in.
func edgePoints(in columns, n int) accel.EdgePoints {
	return accel.EdgePoints{P: in.f32[0], Active: in.u8[0], N: n}
}

// edgeIDs are the id columns every edge record ends with.
func edgeIDs(k int) []spec {
	return []spec{col("shape_id", k), col("edge_id", k), col("global_edge_id", k)}
}

func nearestEdgeJob(t *shard.NearestEdge) *job {
	return &job{key: shard.OpNearestEdge, in: pointLayout(len(t.Active) > 0), vertices: -1, edges: true,
		host: hostIn{f32: [][]float32{t.Points}, u8: [][]bool{t.Active}},
		out:  layout{f32: []spec{col("distance", 1), col("edge_point", 3), col("edge_t", 1)}, i32: edgeIDs(1)},
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			return k.edges.NearestPoint(s, edgePoints(in, n), accel.EdgePointOut{Distance: out.f32[0],
				EdgePoint: out.f32[1], EdgeT: out.f32[2], ShapeID: out.i32[0], EdgeID: out.i32[1], GlobalEdgeID: out.i32[2]})
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			r := edge.NewPointResult(hi - lo)
			if err := download(s, out.f32, [][]float32{r.Distance, r.EdgePoint, r.EdgeT}); err != nil {
				return nil, err
			}
			if err := download(s, out.i32, [][]int32{r.ShapeID, r.EdgeID, r.GlobalEdgeID}); err != nil {
				return nil, err
			}
			return r, nil
		}}
}

func nearestEdgeRayJob(t *shard.NearestEdgeRay) *job {
	return &job{key: shard.OpNearestEdgeRay, in: rayLayout(hostRayNames, len(t.TMax) > 0, len(t.Active) > 0),
		vertices: -1, edges: true, host: hostRays(t.O, t.D, t.TMax, t.Active),
		out: layout{f32: []spec{col("distance", 1), col("ray_t", 1), col("point", 3), col("edge_t", 1), col("edge_point", 3)},
			i32: edgeIDs(1)},
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			r := k.rays(in, n)
			r.Counter = nil // the edge kernels are not persistent
			return k.edges.NearestRay(s, r, accel.EdgeRayOut{Distance: out.f32[0], RayT: out.f32[1], Point: out.f32[2],
				EdgeT: out.f32[3], EdgePoint: out.f32[4], ShapeID: out.i32[0], EdgeID: out.i32[1], GlobalEdgeID: out.i32[2]})
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			r := edge.NewRayResult(hi - lo)
			if err := download(s, out.f32, [][]float32{r.Distance, r.RayT, r.Point, r.EdgeT, r.EdgePoint}); err != nil {
				return nil, err
			}
			if err := download(s, out.i32, [][]int32{r.ShapeID, r.EdgeID, r.GlobalEdgeID}); err != nil {
				return nil, err
			}
			return r, nil
		}}
}

func nearestEdgesJob(t *shard.NearestEdges) *job {
	k := t.K
	return &job{key: t.Op().Key, in: pointLayout(len(t.Active) > 0), vertices: -1, edges: true,
		host: hostIn{f32: [][]float32{t.Points}, u8: [][]bool{t.Active}},
		out: layout{f32: []spec{col("distance", k), col("point", 3*k), col("edge_t", k), col("edge_point", 3*k)},
			i32: edgeIDs(k), u8: []spec{col("valid", k), col("boundary", k)}},
		run: func(kn kernels, s *launch.Stream, in, out columns, n int) error {
			return kn.edges.NearestK(s, edgePoints(in, n), k, accel.EdgeTopKOut{Valid: out.u8[0], Boundary: out.u8[1],
				Distance: out.f32[0], Point: out.f32[1], EdgeT: out.f32[2], EdgePoint: out.f32[3],
				ShapeID: out.i32[0], EdgeID: out.i32[1], GlobalEdgeID: out.i32[2]})
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			r := edge.NewTopK(hi-lo, k)
			if err := download(s, out.f32, [][]float32{r.Distance, r.Point, r.EdgeT, r.EdgePoint}); err != nil {
				return nil, err
			}
			if err := download(s, out.i32, [][]int32{r.ShapeID, r.EdgeID, r.GlobalEdgeID}); err != nil {
				return nil, err
			}
			if err := downloadBools(s, out.u8[0], r.Valid); err != nil {
				return nil, err
			}
			return r, downloadBools(s, out.u8[1], r.Boundary)
		}}
}
