package replica

import (
	"math"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// The closest-point query of package shard on a CUDA replica: a chunk's
// points are uploaded on in, the query runs on the launch stream over the
// replica's own triangle BVH, and the master downloads the record in
// Result. The kernel answers every row exactly as the CPU reference does,
// so each row is bitwise the single-device row.

func closestPointJob(t *shard.ClosestPoint) *job {
	limit, err := geom.CheckMaxDist(t.MaxDist)
	if err != nil { // validated by the layer (Rows); a NaN cannot reach here
		limit = math.Inf(1)
	}
	return &job{key: shard.OpClosestPoint, in: pointLayout(len(t.Active) > 0), vertices: -1,
		host: hostIn{f32: [][]float32{t.Points}, u8: [][]bool{t.Active}},
		out: layout{f32: []spec{col("distance", 1), col("point", 3), col("bary", 3)},
			i32: []spec{col("shape_id", 1), col("local_face_id", 1), col("global_face_id", 1)}},
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			return k.bvh.ClosestPoint(s, accel.ClosestPoints{P: in.f32[0], Active: in.u8[0], N: n, Limit: limit,
				Counter: k.counter}, accel.ClosestOut{Distance: out.f32[0], Point: out.f32[1], Bary: out.f32[2],
				ShapeID: out.i32[0], LocalFaceID: out.i32[1], GlobalFaceID: out.i32[2]})
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			r := geom.NewClosestPointsZeroed(hi - lo)
			if err := download(s, out.f32, [][]float32{r.Dist, r.Point, r.Bary}); err != nil {
				return nil, err
			}
			if err := download(s, out.i32, [][]int32{r.ShapeID, r.LocalFaceID, r.GlobalFaceID}); err != nil {
				return nil, err
			}
			return r, nil
		}}
}
