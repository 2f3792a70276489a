package cpu

import (
	"context"

	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/rf"
)

// AccumDfrDirect runs rf's float64 reference.
func (e *Engine) AccumDfrDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.AccumOptions) (*rf.AccumResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rf.AccumDfrDirect(Scene{e.s}, st, g, m, active, opt)
}

// AccumDfrCoherentDirect runs rf's float64 reference.
func (e *Engine) AccumDfrCoherentDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.CoherentOptions) (*rf.CoherentResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rf.AccumDfrCoherentDirect(Scene{e.s}, st, g, m, active, opt)
}

// AccumulateReflections runs rf's float64 reference.
func (e *Engine) AccumulateReflections(ctx context.Context, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial, maxBounces int, opt rf.ReflOptions) (*rf.ReflResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rf.AccumulateReflections(Scene{e.s}, rays, g, m, maxBounces, opt)
}

// TraceDfrPaths runs rf's float64 reference.
func (e *Engine) TraceDfrPaths(ctx context.Context, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool, opt rf.PathOptions) (*rf.DfrPaths, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rf.TraceDfrPaths(Scene{e.s}, tx, rx, st, m, active, opt)
}

// Scene adapts a reference scene to rf.Scene.
type Scene struct{ S *ref.Scene }

// NumFaces implements rf.Scene.
func (a Scene) NumFaces() int { return a.S.NumFaces() }

// Triangle implements rf.Scene.
func (a Scene) Triangle(f int) (p0, p1, p2 [3]float32) { return a.S.Tables().Triangle(f) }

// AnyHit implements rf.Scene.
func (a Scene) AnyHit(o, d [3]float32, tmin, tmax float32) bool { return a.S.AnyHit(o, d, tmin, tmax) }

// ClosestHit implements rf.Scene.
func (a Scene) ClosestHit(o, d [3]float32, tmin, tmax float32) (rf.Hit, bool) {
	h, ok := a.S.Closest(o, d, tmin, tmax)
	return rf.Hit{T: h.T, U: h.U, V: h.V, Prim: h.Prim}, ok
}
