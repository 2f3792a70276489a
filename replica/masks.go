package replica

import (
	"fmt"

	"github.com/rayd-go/rayd/shard"
)

// Visibility masks on a replica: the meshes' masks live in the replica's
// tables and, expanded per face, in its BVH (accel.BVH.SetFaceMasks), so
// intersect, trace_reflections and visible honour them through the masked
// kernels; per-ray tmin and masks travel with the rows as two optional
// input columns of the host intersect and trace_reflections jobs.

// applyMeshMasks installs the tables' masks in the BVH when any differs
// from the default (at build).
func (r *Replica) applyMeshMasks() error {
	if r.tables.MasksDefault() && !r.bvh.Masked() {
		return nil
	}
	if err := r.bvh.SetFaceMasks(r.main, r.tables.FaceMasks()); err != nil {
		return fmt.Errorf("replica: mesh masks on cuda:%d: %w", r.Device(), err)
	}
	return nil
}

// setMeshMask records the mask in the tables and installs the face masks
// on main, after every query already issued and before every later one.
// r.mu is held.
func (r *Replica) setMeshMask(m shard.SetMeshMask) error {
	if err := r.tables.SetMask(m.Mesh, m.Mask); err != nil {
		return err
	}
	if err := r.afterLaunches(); err != nil {
		return err
	}
	if err := r.applyMeshMasks(); err != nil {
		return err
	}
	return r.beforeLaunches()
}

// limitsLayout adds the optional per-ray limit columns (tmin, then the ray
// mask) to the input layout of a host ray job.
func limitsLayout(l layout, tmin, mask bool) layout {
	l.f32 = append(l.f32, col("tmin", b2i(tmin)))
	l.u8 = append(l.u8, col("mask", b2i(mask)))
	return l
}

// hostLimits adds the limit columns to a host ray job's inputs.
func hostLimits(h hostIn, tmin []float32, mask []uint8) hostIn {
	h.f32 = append(h.f32, tmin)
	h.u8 = append(h.u8, nil)
	h.raw = make([][]uint8, len(h.u8))
	h.raw[len(h.u8)-1] = mask
	return h
}
