package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// DefaultMask is the visibility mask of a mesh built without one and of a
// ray without one (every bit set): by default every ray hits every mesh.
const DefaultMask = geom.DefaultMask

// Mask returns a pointer to v, for Mesh.Mask: Mesh{…, Mask: rayd.Mask(0x01)}
// (a nil Mesh.Mask is DefaultMask).
func Mask(v uint8) *uint8 { return geom.Mask(v) }

// checkTracedRays validates a ray batch of a ray-tracing query, its TMin and
// Mask included: a *LengthError (ErrLength) for a slice of the wrong
// length, an *ArgumentError (ErrInvalidArgument) naming "tmin[i]" for a
// tmin that is not finite, negative or above the row's tmax.
func checkTracedRays(r Rays) error {
	n, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active)
	if err != nil {
		return err
	}
	return geom.CheckRayLimits(n, r.TMax, geom.RayLimits{TMin: r.TMin, Mask: r.Mask})
}

// checkUntracedRays refuses TMin and Mask where they cannot apply (the
// nearest-edge ray queries, which trace no triangle, and device rays, which
// carry no limits): an *ArgumentError naming the field, never a silently
// ignored input.
func checkUntracedRays(op string, r Rays) error {
	switch {
	case len(r.TMin) > 0:
		return &geom.ArgumentError{Field: "tmin", Reason: op + " takes no TMin; it applies to the host Intersect and TraceReflections"}
	case len(r.Mask) > 0:
		return &geom.ArgumentError{Field: "mask", Reason: op + " takes no Mask; it applies to the host Intersect and TraceReflections"}
	}
	return nil
}

// SetMeshMask sets the 8-bit visibility mask of mesh `mesh`: from then on
// a ray hits the mesh only when its mask (Rays.Mask, DefaultMask when
// absent) shares a bit with mask; 0 hides the mesh from every traced query.
// It waits for running queries and blocks new ones while it runs. Errors:
// ErrInvalidArgument for a mesh outside [0, NumMeshes), ErrClosed, and the
// engine's failure (on a replicated scene a failed broadcast leaves the
// replicas refusing work, ErrPoisoned, until Rebuild); on error the mask is
// unchanged.
//
// Which queries honour masks: the CPU backend honours them in every traced
// query (Intersect, TraceReflections, Visible, Crossings, the visibility
// variants and the RF operations). A CUDA scene (rayd-go's BVH or OptiX),
// and a replicated scene, honour them in Intersect, TraceReflections,
// Visible, Crossings and the visibility variants (host and device paths)
// and refuse the RF operations with ErrUnsupported while any mask differs
// from DefaultMask. No query ignores a mask. Setting every mask
// back to DefaultMask restores the unmasked kernels and their speed.
func (s *Scene) SetMeshMask(ctx context.Context, mesh int, mask uint8) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	old := s.tables.MaskOf(mesh)
	if err := s.tables.SetMask(mesh, mask); err != nil {
		return err
	}
	if err := s.eng.SetMeshMask(ctx, mesh, mask); err != nil {
		// The caller-visible mask changes only when the engine followed.
		_ = s.tables.SetMask(mesh, old)
		return err
	}
	return nil
}

// MeshMask returns the visibility mask of mesh `mesh` (its Mesh.Mask or the
// last SetMeshMask; DefaultMask when never set). Errors: ErrInvalidArgument
// for a mesh outside [0, NumMeshes).
func (s *Scene) MeshMask(mesh int) (uint8, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if mesh < 0 || mesh >= s.tables.NumMeshes() {
		return 0, fmt.Errorf("%w: %d not in [0,%d)", geom.ErrMeshIndex, mesh, s.tables.NumMeshes())
	}
	return s.tables.MaskOf(mesh), nil
}
