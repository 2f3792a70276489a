package cuda

// Masks of the instance layer: the instanced intersect takes the rows'
// tmin and masks with the rays (uploadLimits), the instances' masks travel
// in the instance records (UpdateInstances uploads them with the
// transforms), and the meshes' masks are handed to the layer when it is
// built and at every SetMeshMask (followInstanceMasks).

// followInstanceMasks hands the tables' mesh masks to the instance layer,
// if there is one, on the build stream.
func (e *Engine) followInstanceMasks() error {
	if e.inst == nil || e.inst.layer == nil {
		return nil
	}
	return e.inst.layer.FollowMeshMasks(e.build, e.tables)
}
