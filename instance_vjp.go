package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// InstanceTransformVJP is the frozen-winner backward pass of Intersect on
// an instanced scene with respect to the instances' transforms: given the
// rays, the forward record hits (FlagGeometric: PrimID and InstanceID) and
// the cotangents of t and p (g.T, g.P; the other fields must be nil), it
// returns ∂L/∂transform, 12 float64 values per instance (row-major 3×4,
// like Transform), summed over the rows in row order. Each row's winner is
// frozen: t is the parameter where the ray meets the plane of the winning
// face mapped through its instance's transform, and p = o + t·d. Rows that
// missed contribute nothing. It is computed in float64 on the CPU backend
// (checked against central differences); the CUDA and replicated engines
// refuse it with ErrUnsupported.
//
// Errors: ErrInvalidArgument on a mesh-only scene, for a record without
// instance ids, for cotangents of other fields, and for ids that name no
// instance or a face of another geometry; ErrLength for mismatched slices.
func (s *Scene) InstanceTransformVJP(ctx context.Context, r Rays, hits *Hits, g IntersectCotangents) ([]float64, error) {
	if s.inst == nil {
		return nil, &geom.ArgumentError{Field: "instances", Reason: "the scene has no instances"}
	}
	n, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active)
	if err != nil {
		return nil, err
	}
	if hits == nil || hits.Len() != n {
		return nil, fmt.Errorf("%w: the hits record does not match %d rays", ErrLength, n)
	}
	if hits.InstanceID == nil || hits.PrimID == nil {
		return nil, &geom.ArgumentError{Field: "hits", Reason: "the forward record needs FlagGeometric (PrimID and InstanceID)"}
	}
	if g.N != nil || g.GeoN != nil || g.UV != nil || g.Bary != nil {
		return nil, &geom.ArgumentError{Field: "cotangents", Reason: "the transform gradient takes cotangents of T and P only"}
	}
	if err := g.Check(n); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.InstanceTransformVJP(ctx, r.engine(), hits.InstanceID, hits.PrimID, g.T, g.P)
}
