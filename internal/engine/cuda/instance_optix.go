package cuda

import (
	"context"
	"errors"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
)

// The instance layer of an OptiX engine: one GAS per geometry and an IAS
// over the instances (accel.OptiXInstanceLayer). Intersect honours the
// per-ray tmin and mask, the instances' masks (OptiX's visibility mask)
// and the meshes' masks (an any-hit filter, run only while a mesh mask
// differs from the default).

// setOptiXInstances builds (or rebuilds) the OptiX instance layer over x
// on the build stream, replacing the previous one.
func (e *Engine) setOptiXInstances(x *geom.Instances) error {
	l, err := accel.NewOptiXInstanceLayer(e.build, e.tables, x)
	if err != nil {
		return err
	}
	if err := e.closeInstances(); err != nil {
		return errors.Join(err, l.Close())
	}
	e.inst = &instances{ox: l, table: x}
	return nil
}

// updateOptiXInstances uploads the table's transforms and masks and
// rebuilds the IAS; the GASes are untouched.
func (e *Engine) updateOptiXInstances() error {
	if err := e.inst.ox.Update(e.build, e.inst.table); err != nil {
		return err
	}
	return e.build.Synchronize()
}

// intersectOptiXInstanced runs the OptiX instanced intersect on a slot:
// upload (rays, limits, the mesh masks when one differs from the
// default), launch, download.
func (e *Engine) intersectOptiXInstanced(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	n := r.Len()
	var res *geom.Hits
	err := e.withRays(ctx, r.Origins, r.Directions, r.TMax, r.Active, func(sl *slot, dr accel.Rays) error {
		if err := e.uploadLimits(sl, r, &dr); err != nil {
			return err
		}
		var geoMask *launch.Buffer[uint8]
		if !e.tables.MasksDefault() {
			var err error
			if geoMask, err = stage(e, sl, sl.u8, "geometry_mask", accel.GeometryMasks(e.tables)); err != nil {
				return err
			}
		}
		out, err := e.hitBuffers(sl, n, flags)
		if err != nil {
			return err
		}
		var ids *launch.Buffer[int32]
		if flags.Has(geom.FlagGeometric) {
			if ids, err = scratch(e.dev, sl.i32, "instance", n); err != nil {
				return err
			}
		}
		dr.Counter = nil
		if err := e.inst.ox.Intersect(sl.s, dr, flags, geoMask, out, ids); err != nil {
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
