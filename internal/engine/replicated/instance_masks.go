package replicated

import "github.com/rayd-go/rayd/shard"

// Masks of the replicated instance layer: every position holds the
// instance records (their masks included, broadcast by UpdateInstances)
// and the meshes' masks (set when the layer is built and at every
// SetMeshMask); the rows' tmin and masks travel with each position's part
// of the rows. Every position runs the one-device kernels, so the record
// is one device's bit for bit.

// followInstanceMasks hands the tables' mesh masks to every position of
// the instance layer, if there is one; a failure poisons the instance
// layer until it is rebuilt.
func (e *Engine) followInstanceMasks() error {
	if e.inst == nil {
		return nil
	}
	errs := e.inst.each(func(p instancePos, _ int) error {
		if err := p.layer.FollowMeshMasks(p.s, e.tables); err != nil {
			return err
		}
		return p.s.Synchronize()
	})
	if errs != nil {
		e.inst.poison = &shard.PoisonedError{Operation: "SetMeshMask", Cause: errs}
		return e.poisonNote(e.inst.poison)
	}
	return nil
}
