package engine

import "context"

// Masks is how an engine follows the meshes' visibility masks
// (geom.Tables.Mask). Every traced query honours them: a face counts only
// when the mask of its mesh shares a bit with the ray's mask (DefaultMask
// for rays without one). An engine that cannot honour a non-default mask
// in some query refuses that query with an *UnsupportedError while any
// mask differs from the default; it never ignores a mask.
type Masks interface {
	// SetMeshMask makes the engine follow a mask change of mesh (already
	// written into the façade's tables). Called under the scene's
	// exclusive lock.
	SetMeshMask(ctx context.Context, mesh int, mask uint8) error
}
