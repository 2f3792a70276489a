package cpu

import "context"

// SetMeshMask reloads the reference scene's face masks from the tables:
// every traced query of the reference (intersect, trace_reflections, the
// visibility queries and the RF operations through Scene) honours them.
func (e *Engine) SetMeshMask(ctx context.Context, _ int, _ uint8) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.s.ReloadMasks()
	return nil
}
