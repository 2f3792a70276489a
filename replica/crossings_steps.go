package replica

import (
	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// crossingsJob is the crossings query over the replica's triangle BVH: the
// segment columns in, K slots of t, prim and shape and one count per row
// out; Overflow is derived from the count on the host.
func crossingsJob(t *shard.Crossings) *job {
	k := t.K
	return &job{key: t.Op().Key, in: rayLayout(hostSegNames, false, len(t.Active) > 0), vertices: -1,
		host: hostRays(t.Start, t.End, nil, t.Active),
		out:  layout{f32: []spec{col("t", k)}, i32: []spec{col("prim", k), col("shape", k), col("count", 1)}},
		run: func(kn kernels, s *launch.Stream, in, out columns, n int) error {
			r := kn.rays(in, n)
			seg := accel.Segments{Start: r.O, End: r.D, Active: r.Active, N: n, Counter: r.Counter}
			return kn.bvh.Crossings(s, seg, k, accel.Crossings{T: out.f32[0], Prim: out.i32[0], Shape: out.i32[1], Count: out.i32[2]})
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			c := geom.NewCrossings(hi-lo, k)
			if err := download(s, out.f32, [][]float32{c.T}); err != nil {
				return nil, err
			}
			if err := download(s, out.i32, [][]int32{c.Prim, c.Shape, c.Count}); err != nil {
				return nil, err
			}
			c.SetOverflow()
			return c, nil
		}}
}
