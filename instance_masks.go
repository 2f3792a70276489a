package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// noInstances refuses an instance operation on a mesh-only scene.
func (s *Scene) noInstances() error {
	return &geom.ArgumentError{Field: "instances", Reason: fmt.Sprintf("the scene has no instances (%d meshes)", s.tables.NumMeshes())}
}

// SetInstanceMask sets the 8-bit visibility mask of instance `instance`
// (its Instance.Mask until now): from then on a row of Intersect sees the
// instance only when its ray mask (Rays.Mask, DefaultMask when absent)
// shares a bit with mask, and, as on a mesh-only scene, a face only when
// the ray mask also shares a bit with its mesh's mask (SetMeshMask). 0
// hides the instance from every row; setting DefaultMask back restores
// the unmasked answer. Only the instance level changes. It waits for
// running queries and blocks new ones while it runs.
//
// Errors: ErrInvalidArgument on a mesh-only scene, ErrInstanceGeometry for
// an instance outside [0, NumInstances), ErrClosed, and the engine's
// failure (on a replicated scene a failed broadcast leaves the instance
// layer refusing work, ErrPoisoned, until Rebuild); on error the mask is
// unchanged.
func (s *Scene) SetInstanceMask(ctx context.Context, instance int, mask uint8) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.inst == nil {
		return s.noInstances()
	}
	old, err := s.instanceMask(instance)
	if err != nil {
		return err
	}
	if err := s.inst.SetMask(instance, mask); err != nil {
		return err
	}
	if err := s.eng.UpdateInstances(ctx, instance, 1); err != nil {
		// The caller-visible mask changes only when the engine followed.
		_ = s.inst.SetMask(instance, old)
		return err
	}
	return nil
}

// InstanceMask returns the visibility mask of instance `instance` (its
// Instance.Mask or the last SetInstanceMask; DefaultMask when never set).
// Errors: ErrInvalidArgument on a mesh-only scene, ErrInstanceGeometry for
// an instance outside [0, NumInstances).
func (s *Scene) InstanceMask(instance int) (uint8, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.inst == nil {
		return 0, s.noInstances()
	}
	return s.instanceMask(instance)
}

// instanceMask is the mask of an instance of an instanced scene, or the
// *InstanceError (ErrInstanceGeometry) of an index out of range.
func (s *Scene) instanceMask(instance int) (uint8, error) {
	if instance < 0 || instance >= s.inst.Len() {
		return 0, &geom.InstanceError{Instance: instance, Kind: geom.ErrInstanceGeometry,
			Reason: fmt.Sprintf("instance %d not in [0,%d)", instance, s.inst.Len())}
	}
	return s.inst.Records[instance].Mask, nil
}
