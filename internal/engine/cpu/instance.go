package cpu

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/ref"
)

// SetInstances builds the reference's instanced scene (one BVH per
// geometry from the tables' current vertices) over inst.
func (e *Engine) SetInstances(ctx context.Context, inst *geom.Instances) error {
	s, err := ref.NewInstancedScene(ctx, e.tables, inst)
	if err != nil {
		return err
	}
	e.inst = s
	return nil
}

// UpdateInstances has nothing to do: the reference reads the transforms
// and the instance masks from the table at every query.
func (e *Engine) UpdateInstances(ctx context.Context, first, n int) error {
	if e.inst == nil {
		return engine.Unsupported(e.Describe(), "UpdateInstances", "the scene has no instances")
	}
	return ctx.Err()
}

// IntersectInstanced runs the reference's instanced intersect with the
// rows' limits (tmin, ray mask), the instances' masks and the meshes'
// masks (the reference reads the last two at every query).
func (e *Engine) IntersectInstanced(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	if e.inst == nil {
		return nil, engine.Unsupported(e.Describe(), "IntersectInstanced", "the scene has no instances")
	}
	return e.inst.IntersectLimits(ctx, r.Origins, r.Directions, r.TMax, r.Active, r.Limits(), flags)
}

// InstanceTransformVJP runs the reference's transform VJP.
func (e *Engine) InstanceTransformVJP(ctx context.Context, r engine.Rays, inst, prim []int32, gT, gP []float32) ([]float64, error) {
	if e.inst == nil {
		return nil, engine.Unsupported(e.Describe(), "InstanceTransformVJP", "the scene has no instances")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.inst.TransformVJP(r.Origins, r.Directions, inst, prim, gT, gP)
}
