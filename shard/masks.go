package shard

// SetMeshMask sets the visibility mask of mesh Mesh (geom.Tables.SetMask):
// the traced queries then count a face of the mesh only for rays whose
// mask shares a bit with Mask.
type SetMeshMask struct {
	Mesh int
	Mask uint8
}

// Operation returns "set_mesh_mask".
func (SetMeshMask) Operation() string { return "set_mesh_mask" }
