package replicated

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
)

// noInstances is why this engine refuses instanced scenes.
const noInstances = "instanced scenes run on one device (the CPU backend or the CUDA BVH) for now"

// SetInstances refuses: this engine has no instance layer yet.
func (e *Engine) SetInstances(context.Context, *geom.Instances) error {
	return engine.Unsupported(e.Describe(), "instances", noInstances)
}

// UpdateInstances refuses: this engine has no instance layer yet.
func (e *Engine) UpdateInstances(context.Context, int, int) error {
	return engine.Unsupported(e.Describe(), "SetInstanceTransforms", noInstances)
}

// IntersectInstanced refuses: this engine has no instance layer yet.
func (e *Engine) IntersectInstanced(context.Context, engine.Rays, geom.Flags) (*geom.Hits, error) {
	return nil, engine.Unsupported(e.Describe(), "Intersect (instanced)", noInstances)
}

// InstanceTransformVJP refuses: this engine has no instance layer yet.
func (e *Engine) InstanceTransformVJP(context.Context, engine.Rays, []int32, []int32, []float32, []float32) ([]float64, error) {
	return nil, engine.Unsupported(e.Describe(), "InstanceTransformVJP", noInstances)
}
