package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// IntersectCotangents are the upstream gradients of Intersect's outputs on
// the host: per row ∂L/∂t (1), ∂L/∂p (3), ∂L/∂n (3), ∂L/∂geo_n (3), ∂L/∂uv
// (2), ∂L/∂barycentric (3). A nil field is zero.
type IntersectCotangents = ref.IntersectCotangents

// IntersectGrads is the result of IntersectVJP: the gradient with respect
// to every scene-global vertex (3 per vertex, meshes concatenated in mesh
// order) and to every ray's origin and direction (3 per row).
type IntersectGrads struct {
	Vertices, Origins, Directions []float32
	offsets                       []int32 // vertex offset of each mesh
}

// MeshVertices returns mesh m's part of Vertices (3 per vertex of the mesh).
func (g *IntersectGrads) MeshVertices(m int) []float32 {
	begin := 3 * int(g.offsets[m])
	end := len(g.Vertices)
	if m+1 < len(g.offsets) {
		end = 3 * int(g.offsets[m+1])
	}
	return g.Vertices[begin:end]
}

// NumVertices returns the number of scene-global vertices (over all meshes).
func (s *Scene) NumVertices() int { return s.tables.NumVertices() }

// IntersectVJP is the reverse-mode derivative of Intersect with a frozen
// winner (RayD's intersect VJP): given the rays r, the record hits that
// Intersect returned for them (PrimID, i.e. FlagGeometric, is required; UV
// is used when present, otherwise (u, v) is recomputed) and the upstream
// gradients g, it returns ∂L/∂vertices, ∂L/∂origins and ∂L/∂directions.
// The winner is not re-traced: gradients are taken at the scene's current
// vertices (as of the last UpdateVertices). Inactive rows and misses
// contribute nothing; ∂L/∂tmax is zero.
//
// On a single-device GPU scene (the CUDA BVH or OptiX) the rows run on the
// device (double-precision rows, float32 atomic vertex sums); other
// backends evaluate the float64 CPU reference (ref.IntersectVJP).
func (s *Scene) IntersectVJP(ctx context.Context, r Rays, hits *Hits, g IntersectCotangents) (*IntersectGrads, error) {
	n, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active)
	if err != nil {
		return nil, err
	}
	prim, uv, err := tapeOf(hits, n)
	if err != nil {
		return nil, err
	}
	if err := g.Check(n); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e, ok := s.eng.(*cudaEngine); ok && e.vjpTracer() != nil {
		res, err := e.intersectVJP(ctx, r, prim, uv, g)
		if res != nil {
			res.offsets = s.tables.VertexOffset
		}
		return res, err
	}
	ref64, err := ref.IntersectVJP(s.tables, r.Origins, r.Directions, r.Active, prim, uv, g)
	if err != nil {
		return nil, err
	}
	return &IntersectGrads{Vertices: narrow(ref64.Vertices), Origins: narrow(ref64.Origins),
		Directions: narrow(ref64.Directions), offsets: s.tables.VertexOffset}, nil
}

// tapeOf extracts the winner tape (global prim ids, optional uv) of n rows.
func tapeOf(h *Hits, n int) ([]int32, []float32, error) {
	switch {
	case h == nil || len(h.PrimID) == 0 && n > 0:
		return nil, nil, fmt.Errorf("%w: IntersectVJP needs the forward record's PrimID (FlagGeometric)", ErrInvalidArgument)
	case len(h.PrimID) != n:
		return nil, nil, &geom.LengthError{Field: "hits.PrimID", Got: len(h.PrimID), Want: n, PerRow: 1}
	case len(h.UV) != 0 && len(h.UV) != 2*n:
		return nil, nil, &geom.LengthError{Field: "hits.UV", Got: len(h.UV), Want: 2 * n, PerRow: 2}
	}
	if len(h.UV) == 0 {
		return h.PrimID, nil, nil
	}
	return h.PrimID, h.UV, nil
}

func narrow(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// vjpTracer is a tracer that carries the intersect VJP (accel.BVH and
// accel.OptiX both do).
type vjpTracer interface {
	IntersectVJP(s *launch.Stream, r accel.Rays, tape accel.Tape, g accel.Cotangents, out accel.Grads) error
	NumVertices() int
}

// vjpTracer returns the engine's tracer as a vjpTracer (nil when it has none).
func (e *cudaEngine) vjpTracer() vjpTracer {
	if e.bvh == nil || isNilTracer(e.bvh) {
		return nil
	}
	vt, _ := e.bvh.(vjpTracer)
	return vt
}

// intersectVJP runs the VJP of a host batch on the device: rays, tape and
// cotangents go to the slot's scratch buffers, the gradients come back.
func (e *cudaEngine) intersectVJP(ctx context.Context, r Rays, prim []int32, uv []float32, g IntersectCotangents) (*IntersectGrads, error) {
	vt := e.vjpTracer()
	n := r.Len()
	res := &IntersectGrads{Vertices: make([]float32, 3*vt.NumVertices()), Origins: make([]float32, 3*n),
		Directions: make([]float32, 3*n)}
	err := e.withRays(ctx, r.Origins, r.Directions, nil, r.Active, func(sl *slot, dr accel.Rays) error {
		up := func(name string, v []float32) (*launch.Buffer[float32], error) {
			if v == nil {
				return nil, nil
			}
			b, err := scratch(e.dev, sl.f32, name, len(v))
			if err == nil {
				err = b.Upload(sl.s, v)
			}
			return b, err
		}
		var tape accel.Tape
		var cot accel.Cotangents
		var err error
		if tape.Prim, err = scratch(e.dev, sl.i32, "vjp_prim", n); err == nil {
			err = tape.Prim.Upload(sl.s, prim)
		}
		for _, f := range []struct {
			dst  **launch.Buffer[float32]
			name string
			v    []float32
		}{{&tape.UV, "vjp_uv", uv}, {&cot.T, "vjp_gt", g.T}, {&cot.P, "vjp_gp", g.P}, {&cot.N, "vjp_gn", g.N},
			{&cot.GeoN, "vjp_ggeo", g.GeoN}, {&cot.UV, "vjp_guv", g.UV}, {&cot.Bary, "vjp_gbary", g.Bary}} {
			if err == nil {
				*f.dst, err = up(f.name, f.v)
			}
		}
		var out accel.Grads
		if err == nil {
			out.Vertices, err = scratch(e.dev, sl.f32, "vjp_dv", len(res.Vertices))
		}
		if err == nil {
			out.Origins, err = scratch(e.dev, sl.f32, "vjp_do", 3*n)
		}
		if err == nil {
			out.Directions, err = scratch(e.dev, sl.f32, "vjp_dd", 3*n)
		}
		if err == nil {
			err = vt.IntersectVJP(sl.s, dr, tape, cot, out)
		}
		for _, p := range []struct {
			dst []float32
			src *launch.Buffer[float32]
		}{{res.Vertices, out.Vertices}, {res.Origins, out.Origins}, {res.Directions, out.Directions}} {
			if err == nil && len(p.dst) > 0 {
				err = p.src.Download(sl.s, p.dst)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// DeviceIntersectCotangents are device-resident upstream gradients for
// IntersectVJPInto (sizes as IntersectCotangents); nil fields are zero.
type DeviceIntersectCotangents struct {
	T, P, N, GeoN, UV, Bary *Buffer[float32]
}

// DeviceIntersectGrads receives IntersectVJPInto's gradients on the device:
// Vertices (3·NumVertices, overwritten), Origins and Directions (3N). A nil
// field is not computed.
type DeviceIntersectGrads struct {
	Vertices, Origins, Directions *Buffer[float32]
}

// IntersectVJPInto is the device fast path of IntersectVJP: the rays, the
// forward record hits (from IntersectInto on the same rays: PrimID or
// GlobalPrimID required, UV used when present), the cotangents and the
// outputs are device buffers of the scene's device, and nothing is copied
// to the host. It returns once out holds the gradients; out.Vertices can
// then go straight to an all-reduce. Single-device GPU scenes only.
func (s *Scene) IntersectVJPInto(ctx context.Context, rays *DeviceRays, hits *DeviceHits, g DeviceIntersectCotangents, out DeviceIntersectGrads) error {
	if err := s.rlock(); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	e, err := s.cuda()
	if err != nil {
		return err
	}
	vt := e.vjpTracer()
	if vt == nil {
		return fmt.Errorf("%w: IntersectVJPInto: the scene's tracer has no VJP", ErrBackendUnavailable)
	}
	if err := checkDeviceRays(e.dev, rays); err != nil {
		return err
	}
	if hits == nil || hits.N != rays.N {
		return fmt.Errorf("%w: hits record does not match %d rays", ErrLength, rays.N)
	}
	tape := accel.Tape{Prim: hits.PrimID, UV: hits.UV}
	if tape.Prim == nil {
		tape.Prim = hits.GlobalPrimID
	}
	if tape.Prim == nil {
		return fmt.Errorf("%w: IntersectVJPInto needs the forward record's PrimID (FlagGeometric)", ErrInvalidArgument)
	}
	bufs := []*Buffer[float32]{tape.UV, g.T, g.P, g.N, g.GeoN, g.UV, g.Bary, out.Vertices, out.Origins, out.Directions}
	for _, b := range bufs {
		if b != nil {
			if err := sameDevice(e.dev, "VJP buffer", b.Device()); err != nil {
				return err
			}
		}
	}
	if err := sameDevice(e.dev, "hits record", tape.Prim.Device()); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sl, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(sl)
	r := accel.Rays{O: rays.Origins, D: rays.Directions, Active: rays.Active, N: rays.N}
	cot := accel.Cotangents{T: g.T, P: g.P, N: g.N, GeoN: g.GeoN, UV: g.UV, Bary: g.Bary}
	grads := accel.Grads{Vertices: out.Vertices, Origins: out.Origins, Directions: out.Directions}
	if err := vt.IntersectVJP(sl.s, r, tape, cot, grads); err != nil {
		return err
	}
	return sl.s.Synchronize()
}
