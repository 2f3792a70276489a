package engine

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Instancing is the instance layer of a scene: geometries (the scene's
// meshes, each in its object space) placed in the world by affine
// transforms. The façade owns the instance table (validated, the float32
// inverses computed) and hands it to the engine once; a scene without
// instances never calls these methods and runs the plain path.
type Instancing interface {
	// SetInstances builds the engine's instance structures over inst
	// (per-geometry structures and the top level). The engine keeps inst
	// and reads it at every instanced query; it is called again after a
	// vertex update or a Rebuild of an instanced scene.
	SetInstances(ctx context.Context, inst *geom.Instances) error
	// UpdateInstances makes the engine follow new transforms of the n
	// instances from first, already written into the table: only the
	// top level changes.
	UpdateInstances(ctx context.Context, first, n int) error
	// IntersectInstanced is intersect over the instances (the CPU
	// reference ref.InstancedScene defines it), with Hits.InstanceID
	// materialized under FlagGeometric.
	IntersectInstanced(ctx context.Context, r Rays, flags geom.Flags) (*geom.Hits, error)
	// InstanceTransformVJP is the frozen-winner backward pass of the
	// instanced intersect with respect to the transforms (the CPU
	// reference ref.InstancedScene.TransformVJP defines it): 12 float64
	// values per instance, summed over the rows in row order.
	InstanceTransformVJP(ctx context.Context, r Rays, inst, prim []int32, gT, gP []float32) ([]float64, error)
}
