package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// Masks of an instance layer. The instance masks travel in the instance
// records (word 22, InstanceRecords) and every instanced kernel reads
// them; the meshes' masks live in a per-geometry table (SetMeshMasks); the
// per-ray tmin and masks come with the rays (Rays.TMin, Rays.Mask). The
// masked kernels (rayd_intersect_instanced_masked*) run only while rays
// carry limits or a mesh mask differs from the default: instance masks
// alone keep the unmasked kernels, which skip an instance of mask 0 (the
// only one a ray of mask 0xFF cannot see).

// SetMeshMasks sets the visibility mask of every geometry's mesh (one per
// mesh, in mesh order, geom.Tables.Mask) on s: a row then sees an instance
// only when its ray mask shares a bit with its geometry's mask. When every
// mask is geom.DefaultMask the device table is freed and the unmasked
// kernels run again. Queries on other streams must be ordered after s.
func (l *InstanceLayer) SetMeshMasks(s *launch.Stream, masks []uint8) error {
	if len(masks) != len(l.blas) {
		return fmt.Errorf("accel: %d mesh masks for %d geometries", len(masks), len(l.blas))
	}
	if allDefault(masks) {
		err := l.meshMask.CloseOn(s)
		l.meshMask = nil
		return err
	}
	if l.meshMask == nil {
		buf, err := launch.AllocAsync[uint8](s, len(masks))
		if err != nil {
			return err
		}
		l.meshMask = buf
	}
	return l.meshMask.Upload(s, masks)
}

// MeshMasked reports whether a geometry's mesh has a non-default mask.
func (l *InstanceLayer) MeshMasked() bool { return l.meshMask != nil }

// maskedFor reports whether a query of r runs the masked kernels: r
// carries per-ray limits or a mesh mask is set.
func (l *InstanceLayer) maskedFor(r Rays) bool {
	return r.TMin != nil || r.Mask != nil || l.meshMask != nil
}

// maskArgs are the trailing arguments of the masked kernels for r.
func (l *InstanceLayer) maskArgs(r Rays) []any {
	return []any{nullable(r.TMin), nullable(r.Mask), nullable(l.meshMask)}
}

// FollowMeshMasks sets the mesh masks of t (geom.Tables.MaskOf, one per
// mesh) on s when any differs from the default or the layer holds some;
// otherwise it does nothing.
func (l *InstanceLayer) FollowMeshMasks(s *launch.Stream, t *geom.Tables) error {
	if t.MasksDefault() && l.meshMask == nil {
		return nil
	}
	masks := make([]uint8, t.NumMeshes())
	for m := range masks {
		masks[m] = t.MaskOf(m)
	}
	return l.SetMeshMasks(s, masks)
}
