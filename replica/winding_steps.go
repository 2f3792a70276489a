package replica

import (
	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// windingSumsJob is the winding sums of a chunk of points over the
// replica's own geometry (the faces of its BVH): the points in, the
// float64 sum and bound per row out. Each row depends on that row and the
// scene alone, so every row is bitwise the single-device row.
func windingSumsJob(t *shard.WindingSums) *job {
	return &job{key: shard.OpWindingSums, in: pointLayout(len(t.Active) > 0), vertices: -1,
		host: hostIn{f32: [][]float32{t.Points}, u8: [][]bool{t.Active}},
		out:  layout{f64: []spec{col("sum", 1), col("bound", 1)}},
		run: func(k kernels, s *launch.Stream, in, out columns, n int) error {
			return k.bvh.WindingSums(s, accel.WindingPoints{P: in.f32[0], Active: in.u8[0], N: n},
				accel.WindingOut{Sum: out.f64[0], Bound: out.f64[1]})
		},
		record: func(s *launch.Stream, out columns, lo, hi int) (any, error) {
			r := &geom.WindingSums{Sum: make([]float64, hi-lo), Bound: make([]float64, hi-lo)}
			if err := download(s, out.f64, [][]float64{r.Sum, r.Bound}); err != nil {
				return nil, err
			}
			return r, nil
		}}
}
