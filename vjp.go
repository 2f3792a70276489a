package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
)

// IntersectCotangents are the upstream gradients of Intersect's outputs on
// the host: per row ∂L/∂t (1), ∂L/∂p (3), ∂L/∂n (3), ∂L/∂geo_n (3), ∂L/∂uv
// (2), ∂L/∂barycentric (3). A nil field is zero.
type IntersectCotangents = geom.IntersectCotangents

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

// IntersectVJP is the reverse-mode derivative of Intersect with a frozen
// winner (RayD's intersect VJP): given the rays r, the record hits that
// Intersect returned for them (PrimID, i.e. FlagGeometric, is required; UV
// is used when present, otherwise (u, v) is recomputed) and the upstream
// gradients g, it returns ∂L/∂vertices, ∂L/∂origins and ∂L/∂directions.
// The winner is not re-traced: gradients are taken at the scene's current
// vertices (as of the last UpdateVertices). Inactive rows and misses
// contribute nothing; ∂L/∂tmax is zero. Rays.TMin and Rays.Mask are not
// read: they chose the winners in the forward pass, which are given here.
//
// On a GPU scene the rows run on the device (double-precision rows,
// float32 atomic vertex sums); a replicated scene shards the rows and adds
// the per-chunk vertex partials on the host in row order; the CPU backend
// evaluates the float64 reference (ref.IntersectVJP).
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
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	res, err := s.eng.IntersectVJP(ctx, r.engine(), prim, uv, g)
	if err != nil || res == nil {
		return nil, err
	}
	return &IntersectGrads{Vertices: res.Vertices, Origins: res.Origins, Directions: res.Directions, offsets: s.tables.VertexOffset}, nil
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
// then go straight to an all-reduce. On a replicated scene it runs on the
// master's device.
func (s *Scene) IntersectVJPInto(ctx context.Context, rays *DeviceRays, hits *DeviceHits, g DeviceIntersectCotangents, out DeviceIntersectGrads) error {
	if err := s.rlock(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	dev, err := s.eng.FastDevice()
	if err != nil {
		return err
	}
	if err := checkDeviceRays(dev, rays); err != nil {
		return err
	}
	if hits == nil || hits.N != rays.N {
		return fmt.Errorf("%w: hits record does not match %d rays", ErrLength, rays.N)
	}
	tape := engine.DeviceTape{Prim: hits.PrimID, UV: hits.UV}
	if tape.Prim == nil {
		tape.Prim = hits.GlobalPrimID
	}
	if tape.Prim == nil {
		return fmt.Errorf("%w: IntersectVJPInto needs the forward record's PrimID (FlagGeometric)", ErrInvalidArgument)
	}
	if err := sameDevice(dev, "hits record", tape.Prim.Device()); err != nil {
		return err
	}
	for _, b := range []*Buffer[float32]{tape.UV, g.T, g.P, g.N, g.GeoN, g.UV, g.Bary, out.Vertices, out.Origins, out.Directions} {
		if b != nil {
			if err := sameDevice(dev, "VJP buffer", b.Device()); err != nil {
				return err
			}
		}
	}
	return s.eng.IntersectVJPInto(ctx, rays.engine(), tape,
		engine.DeviceCotangents{T: g.T, P: g.P, N: g.N, GeoN: g.GeoN, UV: g.UV, Bary: g.Bary},
		engine.DeviceGrads{Vertices: out.Vertices, Origins: out.Origins, Directions: out.Directions})
}
