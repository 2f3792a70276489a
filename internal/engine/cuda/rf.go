package cuda

import (
	"context"

	"github.com/rayd-go/rayd/rf"
)

// The RF operations run the device kernels of package accel over a BVH of
// the scene (the tracer on a BVH engine, the blocker BVH on OptiX), with
// host inputs and host results.

// rfRun runs fn on a free slot with a BVH of the scene.
func (e *Engine) rfRun(ctx context.Context, fn func(sl *slot, tree rfTree) error) error {
	tree, err := e.bvhTree()
	if err != nil {
		return err
	}
	return e.onSlot(ctx, func(sl *slot) error { return fn(sl, tree) })
}

// AccumDfrDirect runs accum_dfr_direct on the device.
func (e *Engine) AccumDfrDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.AccumOptions) (*rf.AccumResult, error) {
	var res *rf.AccumResult
	err := e.rfRun(ctx, func(sl *slot, t rfTree) (err error) {
		res, err = t.AccumDfrDirectHost(sl.s, st, g, m, active, opt, e.tables.NumFaces(), e.tables.Triangle)
		return err
	})
	return res, err
}

// AccumDfrCoherentDirect runs accum_dfr_coherent_direct on the device.
func (e *Engine) AccumDfrCoherentDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.CoherentOptions) (*rf.CoherentResult, error) {
	var res *rf.CoherentResult
	err := e.rfRun(ctx, func(sl *slot, t rfTree) (err error) {
		res, err = t.AccumDfrCoherentHost(sl.s, st, g, m, active, opt, e.tables.NumFaces(), e.tables.Triangle)
		return err
	})
	return res, err
}

// AccumulateReflections runs accumulate_reflections on the device.
func (e *Engine) AccumulateReflections(ctx context.Context, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial, maxBounces int, opt rf.ReflOptions) (*rf.ReflResult, error) {
	var res *rf.ReflResult
	err := e.rfRun(ctx, func(sl *slot, t rfTree) (err error) {
		res, err = t.AccumulateReflectionsHost(sl.s, rays, g, m, maxBounces, opt, e.tables.NumFaces())
		return err
	})
	return res, err
}

// TraceDfrPaths runs trace_dfr_paths on the device.
func (e *Engine) TraceDfrPaths(ctx context.Context, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool, opt rf.PathOptions) (*rf.DfrPaths, error) {
	var res *rf.DfrPaths
	err := e.rfRun(ctx, func(sl *slot, t rfTree) (err error) {
		res, err = t.TraceDfrPathsHost(sl.s, tx, rx, st, m, active, opt, e.tables.NumFaces(), e.tables.Triangle)
		return err
	})
	return res, err
}
