package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// rfTree is the BVH the RF operations run on.
type rfTree = *accel.BVH

// IntersectVJP runs the intersect VJP of a host batch on the device
// (double-precision rows, float32 atomic vertex sums): rays, tape and
// cotangents go to the slot's scratch buffers, the gradients come back.
func (e *Engine) IntersectVJP(ctx context.Context, r engine.Rays, prim []int32, uv []float32, g geom.IntersectCotangents) (*shard.IntersectGrads, error) {
	n := r.Len()
	res := &shard.IntersectGrads{Vertices: make([]float32, 3*e.tr.NumVertices()), Origins: make([]float32, 3*n),
		Directions: make([]float32, 3*n)}
	err := e.withRays(ctx, r.Origins, r.Directions, nil, r.Active, func(sl *slot, dr accel.Rays) error {
		var tape accel.Tape
		var cot accel.Cotangents
		err := steps(func() (err error) { tape.Prim, err = stage(e, sl, sl.i32, "vjp_prim", prim); return },
			func() (err error) { tape.UV, err = stageOpt(e, sl, sl.f32, "vjp_uv", uv); return },
			func() (err error) { cot.T, err = stageOpt(e, sl, sl.f32, "vjp_gt", g.T); return },
			func() (err error) { cot.P, err = stageOpt(e, sl, sl.f32, "vjp_gp", g.P); return },
			func() (err error) { cot.N, err = stageOpt(e, sl, sl.f32, "vjp_gn", g.N); return },
			func() (err error) { cot.GeoN, err = stageOpt(e, sl, sl.f32, "vjp_ggeo", g.GeoN); return },
			func() (err error) { cot.UV, err = stageOpt(e, sl, sl.f32, "vjp_guv", g.UV); return },
			func() (err error) { cot.Bary, err = stageOpt(e, sl, sl.f32, "vjp_gbary", g.Bary); return })
		if err != nil {
			return err
		}
		a := &scratchSet{e: e, sl: sl}
		out := accel.Grads{Vertices: take(a, sl.f32, "vjp_dv", len(res.Vertices)), Origins: take(a, sl.f32, "vjp_do", 3*n),
			Directions: take(a, sl.f32, "vjp_dd", 3*n)}
		if a.err != nil {
			return a.err
		}
		if err := e.tr.IntersectVJP(sl.s, dr, tape, cot, out); err != nil {
			return err
		}
		return steps(func() error { return out.Vertices.Download(sl.s, res.Vertices) },
			func() error { return download(sl.s, out.Origins, res.Origins) },
			func() error { return download(sl.s, out.Directions, res.Directions) })
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// download copies a device buffer to dst unless dst is empty.
func download[T launch.Elem](s *launch.Stream, b *launch.Buffer[T], dst []T) error {
	if len(dst) == 0 {
		return nil
	}
	return b.Download(s, dst)
}

// IntersectVJPInto runs the intersect VJP on device buffers of the engine's
// device and waits for it.
func (e *Engine) IntersectVJPInto(ctx context.Context, r engine.DeviceRays, tape engine.DeviceTape, g engine.DeviceCotangents, out engine.DeviceGrads) error {
	return e.onSlot(ctx, func(sl *slot) error {
		rays := accel.Rays{O: r.Origins, D: r.Directions, Active: r.Active, N: r.N}
		cot := accel.Cotangents{T: g.T, P: g.P, N: g.N, GeoN: g.GeoN, UV: g.UV, Bary: g.Bary}
		grads := accel.Grads{Vertices: out.Vertices, Origins: out.Origins, Directions: out.Directions}
		if err := e.tr.IntersectVJP(sl.s, rays, accel.Tape{Prim: tape.Prim, UV: tape.UV}, cot, grads); err != nil {
			return err
		}
		return sl.s.Synchronize()
	})
}
