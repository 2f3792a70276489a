package cuda

import (
	"context"
	"errors"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
)

// instances is the engine's instance layer (nil until SetInstances): on
// the CUDA BVH (layer) or, on an OptiX engine, on OptiX (ox).
type instances struct {
	layer *accel.InstanceLayer
	ox    *accel.OptiXInstanceLayer
	table *geom.Instances
}

// SetInstances builds (or rebuilds, after a vertex update) the instance
// layer: on the CUDA BVH one BVH per geometry and the top level, on an
// OptiX engine one GAS per geometry and the IAS (instance_optix.go).
func (e *Engine) SetInstances(ctx context.Context, x *geom.Instances) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.kind == OptiX {
		return e.setOptiXInstances(x)
	}
	l, err := accel.NewInstanceLayer(e.build, e.tables, x, accel.Options{})
	if err != nil {
		return err
	}
	if err := l.FollowMeshMasks(e.build, e.tables); err != nil {
		return errors.Join(err, l.Close())
	}
	if err := e.build.Synchronize(); err != nil { // the queries' streams read the masks
		return errors.Join(err, l.Close())
	}
	if e.inst != nil && e.inst.layer != nil {
		if err := e.inst.layer.Close(); err != nil {
			return errors.Join(err, l.Close())
		}
	}
	e.inst = &instances{layer: l, table: x}
	return nil
}

// UpdateInstances rebuilds the top level from the table's transforms and
// uploads it with the instance records (masks included); the geometries'
// BVHs are untouched.
func (e *Engine) UpdateInstances(ctx context.Context, _, _ int) error {
	if e.inst == nil {
		return engine.Unsupported(e.Describe(), "SetInstanceTransforms", "the scene has no instances")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.inst.ox != nil {
		return e.updateOptiXInstances()
	}
	if err := e.inst.layer.Update(e.build, e.inst.table); err != nil {
		return err
	}
	return e.build.Synchronize()
}

// IntersectInstanced runs the instanced intersect on a slot: upload (the
// rows' limits included), launch, download.
func (e *Engine) IntersectInstanced(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	if e.inst == nil {
		return nil, engine.Unsupported(e.Describe(), "IntersectInstanced", "the scene has no instances")
	}
	n := r.Len()
	if n == 0 {
		h := geom.NewHits(0, flags)
		if h.Flags.Has(geom.FlagGeometric) {
			h.InstanceID = []int32{}
		}
		return h, ctx.Err()
	}
	if e.inst.ox != nil {
		return e.intersectOptiXInstanced(ctx, r, flags)
	}
	var res *geom.Hits
	err := e.withRays(ctx, r.Origins, r.Directions, r.TMax, r.Active, func(sl *slot, dr accel.Rays) error {
		if err := e.uploadLimits(sl, r, &dr); err != nil {
			return err
		}
		out, err := e.hitBuffers(sl, n, flags)
		if err != nil {
			return err
		}
		var ids *launch.Buffer[int32] // the instance ids, with the other ids
		if flags.Has(geom.FlagGeometric) {
			if ids, err = scratch(e.dev, sl.i32, "instance", n); err != nil {
				return err
			}
		}
		if err := e.inst.layer.Intersect(sl.s, dr, flags, out, ids); err != nil {
			return err
		}
		if res, err = DownloadHits(sl.s, out, n, flags); err != nil {
			return err
		}
		if ids != nil {
			res.InstanceID = make([]int32, n)
			return ids.Download(sl.s, res.InstanceID)
		}
		return nil
	})
	return res, err
}

// closeInstances releases the instance layer.
func (e *Engine) closeInstances() error {
	if e.inst == nil {
		return nil
	}
	var err error
	if e.inst.layer != nil {
		err = e.inst.layer.Close()
	}
	if e.inst.ox != nil {
		err = errors.Join(err, e.inst.ox.Close())
	}
	e.inst = nil
	return err
}

// InstanceTransformVJP refuses: the transform gradient has no device
// kernel yet (the CPU backend computes it).
func (e *Engine) InstanceTransformVJP(context.Context, engine.Rays, []int32, []int32, []float32, []float32) ([]float64, error) {
	return nil, engine.Unsupported(e.Describe(), "InstanceTransformVJP", "the transform gradient runs on the CPU backend only for now")
}
