package cuda

import (
	"context"
	"errors"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
)

// Masks on one device. Both tracers honour per-ray tmin and masks and the
// meshes' masks in intersect, trace_reflections and visible (host and
// device paths): the BVH through its masked kernels, OptiX through its
// masked pipelines (an any-hit filter on the face masks); either runs only
// while a query carries limits or a mesh mask differs from the default.
// Crossings and the visibility variants (segment blockers) run their
// masked kernels over the scene's BVH (an OptiX engine's blocker BVH
// carries the masks too). The RF kernels have no masked form: they refuse
// (an *UnsupportedError) while a mesh mask differs from the default instead
// of ignoring it.

// maskedTracer is a tracer that follows face masks (accel.BVH, accel.OptiX).
type maskedTracer interface {
	SetFaceMasks(s *launch.Stream, masks []uint8) error
	Masked() bool
}

var (
	_ maskedTracer = (*accel.BVH)(nil)
	_ maskedTracer = (*accel.OptiX)(nil)
)

// SetMeshMask makes the tracer follow the tables' masks (already updated
// by the façade).
func (e *Engine) SetMeshMask(ctx context.Context, _ int, _ uint8) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.applyMasks(e.tr); err != nil {
		return err
	}
	if err := e.followInstanceMasks(); err != nil {
		return err
	}
	e.blockers.markMasksStale()
	return e.build.Synchronize()
}

// applyMasks uploads the tables' face masks to tr on the build stream (an
// OptiX engine's blocker BVH takes them on its next use).
func (e *Engine) applyMasks(tr tracer) error {
	b, ok := tr.(maskedTracer)
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
