package replicated

import (
	"context"

	"github.com/rayd-go/rayd/internal/engine"
)

// Masks on a replicated scene: the replicas do not yet carry per-ray limits
// or mesh visibility masks through their row columns and mutations, so a
// replicated engine refuses them with an *UnsupportedError (matching
// engine.ErrUnsupported) instead of answering without them.

const masksReason = "per-ray tmin, ray masks and mesh visibility masks run on the CPU and single-device CUDA engines"

// SetMeshMask accepts a change that leaves every mesh at the default mask
// (the replicas' state) and refuses any other.
func (e *Engine) SetMeshMask(ctx context.Context, _ int, _ uint8) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.tables == nil || e.tables.MasksDefault() {
		return nil
	}
	return engine.Unsupported(e.Describe(), "set_mesh_mask", masksReason)
}

// checkLimits refuses per-ray limits and non-default mesh masks.
func (e *Engine) checkLimits(op string, r engine.Rays) error {
	if len(r.TMin) == 0 && len(r.Mask) == 0 && (e.tables == nil || e.tables.MasksDefault()) {
		return nil
	}
	return engine.Unsupported(e.Describe(), op, masksReason)
}
