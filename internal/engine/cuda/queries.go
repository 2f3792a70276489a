package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
)

// Intersect runs intersect on a slot: upload, launch, download.
func (e *Engine) Intersect(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	n := r.Len()
	if n == 0 {
		return geom.NewHits(0, flags), ctx.Err()
	}
	var res *geom.Hits
	err := e.withRays(ctx, r.Origins, r.Directions, r.TMax, r.Active, func(sl *slot, dr accel.Rays) error {
		if err := e.uploadLimits(sl, r, &dr); err != nil {
			return err
		}
		out, err := e.hitBuffers(sl, n, flags)
		if err != nil {
			return err
		}
		if err := e.tr.Intersect(sl.s, dr, flags, out); err != nil {
			return err
		}
		res, err = DownloadHits(sl.s, out, n, flags)
		return err
	})
	return res, err
}

// TraceReflections runs trace_reflections on a slot.
func (e *Engine) TraceReflections(ctx context.Context, r engine.Rays, b int) (*geom.Reflections, error) {
	n := r.Len()
	if n == 0 {
		return geom.NewReflections(0, b), ctx.Err()
	}
	if err := geom.CheckReflections(n, b, true, e.free()); err != nil {
		return nil, err
	}
	res := geom.NewReflections(n, b)
	err := e.withRays(ctx, r.Origins, r.Directions, r.TMax, r.Active, func(sl *slot, dr accel.Rays) error {
		if err := e.uploadLimits(sl, r, &dr); err != nil {
			return err
		}
		a := &scratchSet{e: e, sl: sl}
		out := accel.Reflections{Valid: take(a, sl.u8, "valid", n*b), T: take(a, sl.f32, "t", n*b),
			Prim: take(a, sl.i32, "prim", n*b), Images: take(a, sl.f32, "images", 3*n*b)}
		if a.err != nil {
			return a.err
		}
		if err := e.tr.TraceReflections(sl.s, dr, b, out); err != nil {
			return err
		}
		valid := make([]uint8, n*b)
		if err := steps(func() error { return out.Valid.Download(sl.s, valid) },
			func() error { return out.T.Download(sl.s, res.T) },
			func() error { return out.Prim.Download(sl.s, res.PrimIDs) },
			func() error { return out.Images.Download(sl.s, res.ImageSources) }); err != nil {
			return err
		}
		copy(res.Valid, bytesToBools(valid))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Visible runs visible on a slot.
func (e *Engine) Visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	n := len(start) / 3
	if n == 0 {
		return []bool{}, ctx.Err()
	}
	var res []bool
	err := e.withRays(ctx, start, end, nil, active, func(sl *slot, dr accel.Rays) error {
		out, err := scratch(e.dev, sl.u8, "visible", n)
		if err != nil {
			return err
		}
		seg := accel.Segments{Start: dr.O, End: dr.D, Active: dr.Active, N: n, Counter: sl.counter}
		if err := e.tr.Visible(sl.s, seg, out); err != nil {
			return err
		}
		vis := make([]uint8, n)
		if err := out.Download(sl.s, vis); err != nil {
			return err
		}
		res = bytesToBools(vis)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// hitBuffers returns the slot's scratch record for n rows and flags.
func (e *Engine) hitBuffers(sl *slot, n int, flags geom.Flags) (accel.Hits, error) {
	a := &scratchSet{e: e, sl: sl}
	var h accel.Hits
	h.T = take(a, sl.f32, "t", n)
	if flags.Has(geom.FlagGeometric) {
		h.P, h.GeoN, h.Bary = take(a, sl.f32, "p", 3*n), take(a, sl.f32, "geo_n", 3*n), take(a, sl.f32, "bary", 3*n)
		h.ShapeID, h.PrimID = take(a, sl.i32, "shape", n), take(a, sl.i32, "prim", n)
		h.LocalPrimID, h.GlobalPrimID = take(a, sl.i32, "local", n), take(a, sl.i32, "global", n)
	}
	if flags.Has(geom.FlagShadingN) {
		h.N = take(a, sl.f32, "n", 3*n)
	}
	if flags.Has(geom.FlagUV) {
		h.UV = take(a, sl.f32, "uv", 2*n)
	}
	return h, a.err
}

// DownloadHits copies a device record into a new host record.
func DownloadHits(s *launch.Stream, h accel.Hits, n int, flags geom.Flags) (*geom.Hits, error) {
	res := geom.NewHits(n, flags)
	for _, p := range []struct {
		dst []float32
		src *launch.Buffer[float32]
	}{{res.T, h.T}, {res.P, h.P}, {res.N, h.N}, {res.GeoN, h.GeoN}, {res.UV, h.UV}, {res.Bary, h.Bary}} {
		if p.src != nil && len(p.dst) > 0 {
			if err := p.src.Download(s, p.dst); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range []struct {
		dst []int32
		src *launch.Buffer[int32]
	}{{res.ShapeID, h.ShapeID}, {res.PrimID, h.PrimID}, {res.LocalPrimID, h.LocalPrimID}, {res.GlobalPrimID, h.GlobalPrimID}} {
		if p.src != nil && len(p.dst) > 0 {
			if err := p.src.Download(s, p.dst); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// HitsOf is the accel record of a device record.
func HitsOf(h engine.DeviceHits) accel.Hits {
	return accel.Hits{T: h.T, P: h.P, N: h.Normal, GeoN: h.GeoN, UV: h.UV, Bary: h.Bary,
		ShapeID: h.ShapeID, PrimID: h.PrimID, LocalPrimID: h.LocalPrimID, GlobalPrimID: h.GlobalPrimID}
}

// ReflectionsOf is the accel record of a device reflections record.
func ReflectionsOf(r engine.DeviceReflections) accel.Reflections {
	return accel.Reflections{Valid: r.Valid, T: r.T, Prim: r.PrimIDs, Images: r.Images}
}

// RaysOf is the accel batch of device rays (no counter).
func RaysOf(r engine.DeviceRays) accel.Rays {
	return accel.Rays{O: r.Origins, D: r.Directions, TMax: r.TMax, Active: r.Active, N: r.N}
}
