package replicated

import (
	"context"

	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/shard"
)

// Masks on a replicated scene: every replica is built with the meshes'
// masks and follows SetMeshMask by a broadcast (shard.SetMeshMask), and the
// per-ray tmin and masks travel with the rows of the intersect and
// trace_reflections tasks, so those queries, visible, crossings and the
// visibility variants (the replicas' masked kernels) answer bitwise as on
// one device. The RF operations run kernels without a masked form on CUDA
// replicas: while any mesh mask differs from the default they are refused
// (an *UnsupportedError), never answered without the masks.

// SetMeshMask broadcasts the mask change to every replica, and to every
// position of the instance layer when there is one; a failed broadcast
// poisons the layer (Rebuild recovers it, with the tables' masks).
func (e *Engine) SetMeshMask(ctx context.Context, mesh int, mask uint8) error {
	if err := e.poisonNote(e.l.Broadcast(ctx, shard.SetMeshMask{Mesh: mesh, Mask: mask})); err != nil {
		return err
	}
	return e.followInstanceMasks()
}

// checkMeshMasks refuses op while any mesh mask differs from the default.
func (e *Engine) checkMeshMasks(op string) error {
	if e.tables == nil || e.tables.MasksDefault() {
		return nil
	}
	return engine.Unsupported(e.Describe(), op, "its kernels do not honour mesh visibility masks; reset them to 0xFF")
}
