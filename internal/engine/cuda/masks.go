package cuda

import (
	"context"
	"errors"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/internal/engine"
)

// Masks on one device. The BVH tracer honours per-ray tmin and masks and
// the meshes' masks in intersect, trace_reflections and visible (host and
// device paths) through its masked kernels, which run only while a query
// carries limits or a mesh mask differs from the default; crossings runs
// its masked kernels over the scene's BVH (an OptiX engine's blocker BVH
// carries the masks too). The OptiX tracer and the segment-blocker and RF
// kernels have no masked form: they refuse (an *UnsupportedError) while
// masks are in play instead of ignoring them.

// SetMeshMask makes the tracer follow the tables' masks (already updated
// by the façade).
func (e *Engine) SetMeshMask(ctx context.Context, _ int, _ uint8) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.applyMasks(e.tr); err != nil {
		return err
	}
	e.blockers.markMasksStale()
	return e.build.Synchronize()
}

// applyMasks uploads the tables' face masks to tr on the build stream when
// tr is a BVH (the OptiX tracer refuses masked queries instead; its blocker
// BVH takes them on its next use).
func (e *Engine) applyMasks(tr tracer) error {
	b, ok := tr.(*accel.BVH)
	if !ok {
		return nil
	}
	if !b.Masked() && e.tables.MasksDefault() {
		return nil
	}
	return b.SetFaceMasks(e.build, e.tables.FaceMasks())
}

// withMasks applies the tables' masks to a freshly built tracer (closed
// on failure).
func (e *Engine) withMasks(tr tracer) (tracer, error) {
	if err := e.applyMasks(tr); err != nil {
		return nil, errors.Join(err, tr.Close())
	}
	return tr, nil
}

// checkLimits refuses per-ray limits or non-default mesh masks on a tracer
// without masked kernels.
func (e *Engine) checkLimits(op string, r engine.Rays) error {
	if e.kind != OptiX || (len(r.TMin) == 0 && len(r.Mask) == 0 && e.tables.MasksDefault()) {
		return nil
	}
	return engine.Unsupported(e.Describe(), op, "per-ray tmin and visibility masks need the BVH tracer")
}

// checkMeshMasks refuses an operation whose kernels have no masked form
// while any mesh mask differs from the default.
func (e *Engine) checkMeshMasks(op string) error {
	if e.tables.MasksDefault() {
		return nil
	}
	return engine.Unsupported(e.Describe(), op, "its kernels do not honour mesh visibility masks; reset them to 0xFF")
}

// uploadLimits stages r's per-ray limits into dr.
func (e *Engine) uploadLimits(sl *slot, r engine.Rays, dr *accel.Rays) error {
	var err error
	if len(r.TMin) > 0 {
		if dr.TMin, err = stage(e, sl, sl.f32, "tmin", r.TMin); err != nil {
			return err
		}
	}
	if len(r.Mask) > 0 {
		if dr.Mask, err = stage(e, sl, sl.u8, "mask", r.Mask); err != nil {
			return err
		}
	}
	return nil
}
