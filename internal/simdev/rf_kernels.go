package simdev

import (
	"fmt"
	"slices"

	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The simulated RF kernels run package rf's float64 CPU references on the
// replica's reference scene: accum_dfr_direct and accum_dfr_coherent_direct
// over the launch's lane window, accumulate_reflections over the launch's
// rows, trace_dfr_paths over the launch's transmitter block. The partials
// fold with package shard's merges, so a sharded result equals one CPU run
// exactly in its counters and path rows and up to float64 summation order
// in its grids.

// rfKernelOf returns the simulated kernel of an RF task of package shard,
// or the refusal kernelOf gives any other task.
func rfKernelOf(t shard.Task) (Kernel, error) {
	switch t := t.(type) {
	case *shard.AccumDfrDirect:
		return dfrDirectKernel{t}, nil
	case *shard.AccumDfrCoherentDirect:
		return dfrCoherentKernel{t}, nil
	case *shard.AccumulateReflections:
		return reflAccumKernel{t}, nil
	case *shard.TraceDfrPaths:
		return dfrPathsKernel{t}, nil
	}
	return nil, fmt.Errorf("simdev: no kernel for task %T", t)
}

// rfScene adapts a reference scene to rf.Scene.
type rfScene struct{ s *ref.Scene }

func (a rfScene) NumFaces() int                          { return a.s.NumFaces() }
func (a rfScene) Triangle(f int) (p0, p1, p2 [3]float32) { return a.s.Tables().Triangle(f) }
func (a rfScene) AnyHit(o, d [3]float32, tmin, tmax float32) bool {
	return a.s.AnyHit(o, d, tmin, tmax)
}
func (a rfScene) ClosestHit(o, d [3]float32, tmin, tmax float32) (rf.Hit, bool) {
	h, ok := a.s.Closest(o, d, tmin, tmax)
	return rf.Hit{T: h.T, U: h.U, V: h.V, Prim: h.Prim}, ok
}

// cloneStates deep-copies a state table.
func cloneStates(st *rf.DfrStates) *rf.DfrStates {
	if st == nil {
		return nil
	}
	c := *st
	c.EdgeIndex, c.EdgePos, c.EdgeDir = slices.Clone(st.EdgeIndex), slices.Clone(st.EdgePos), slices.Clone(st.EdgeDir)
	c.EdgeTMin, c.EdgeTMax = slices.Clone(st.EdgeTMin), slices.Clone(st.EdgeTMax)
	c.N0, c.N1, c.Prim0, c.Prim1 = slices.Clone(st.N0), slices.Clone(st.N1), slices.Clone(st.Prim0), slices.Clone(st.Prim1)
	c.ExteriorAngle, c.Src, c.SrcPower = slices.Clone(st.ExteriorAngle), slices.Clone(st.Src), slices.Clone(st.SrcPower)
	c.Wi, c.D0 = slices.Clone(st.Wi), slices.Clone(st.D0)
	return &c
}

// cloneMaterial deep-copies a material table (nil stays the default).
func cloneMaterial(m *rf.DfrMaterial) *rf.DfrMaterial {
	if m == nil {
		return nil
	}
	return &rf.DfrMaterial{EtaR: slices.Clone(m.EtaR), Sigma: slices.Clone(m.Sigma), MuR: slices.Clone(m.MuR),
		Gain: slices.Clone(m.Gain), Valid: slices.Clone(m.Valid)}
}

func cloneF64(v [][]float64) {
	for i := range v {
		v[i] = slices.Clone(v[i])
	}
}

// dfrDirectKernel runs accum_dfr_direct over a lane window.
type dfrDirectKernel struct{ *shard.AccumDfrDirect }

func (k dfrDirectKernel) Input(_, _ int, copied bool) (any, int) {
	t := *k.AccumDfrDirect
	if copied {
		t.States, t.Material, t.Active = cloneStates(t.States), cloneMaterial(t.Material), slices.Clone(t.Active)
	}
	return &t, int(k.InputBytes())
}

func (k dfrDirectKernel) Run(s *ref.Scene, in any, lo, hi int) (any, error) {
	t := in.(*shard.AccumDfrDirect)
	return rf.AccumDfrDirect(rfScene{s}, t.States, t.Grid, t.Material, t.Active, t.Window(lo, hi))
}

func (k dfrDirectKernel) Output(out any, copied bool) (any, int) {
	r := out.(*rf.AccumResult)
	if copied {
		c := *r
		g := [][]float64{c.Power, c.FieldXRe, c.FieldXIm, c.FieldYRe, c.FieldYIm, c.FieldZRe, c.FieldZIm}
		cloneF64(g)
		c.Power, c.FieldXRe, c.FieldXIm, c.FieldYRe, c.FieldYIm, c.FieldZRe, c.FieldZIm = g[0], g[1], g[2], g[3], g[4], g[5], g[6]
		r = &c
	}
	return r, k.OutputBytes(0, 0)
}

// OutputBytes is one device partial: seven float32 grids and seven int32
// counters.
func (k dfrDirectKernel) OutputBytes(_, _ int) int { return k.Grid.Cells()*7*4 + 7*4 }

func (k dfrDirectKernel) Add(acc, part any) (any, error) {
	a := acc.(*rf.AccumResult)
	return a, shard.MergeAccum(a, part.(*rf.AccumResult))
}

// dfrCoherentKernel runs accum_dfr_coherent_direct over a lane window.
type dfrCoherentKernel struct{ *shard.AccumDfrCoherentDirect }

func (k dfrCoherentKernel) Input(_, _ int, copied bool) (any, int) {
	t := *k.AccumDfrCoherentDirect
	if copied {
		t.States, t.Material, t.Active = cloneStates(t.States), cloneMaterial(t.Material), slices.Clone(t.Active)
	}
	return &t, int(k.InputBytes())
}

func (k dfrCoherentKernel) Run(s *ref.Scene, in any, lo, hi int) (any, error) {
	t := in.(*shard.AccumDfrCoherentDirect)
	return rf.AccumDfrCoherentDirect(rfScene{s}, t.States, t.Grid, t.Material, t.Active, t.Window(lo, hi))
}

func (k dfrCoherentKernel) Output(out any, copied bool) (any, int) {
	r := out.(*rf.CoherentResult)
	if copied {
		c := *r
		g := [][]float64{c.DirectFieldXRe, c.DirectFieldXIm, c.DirectFieldYRe, c.DirectFieldYIm, c.DirectFieldZRe,
			c.DirectFieldZIm, c.MultiFieldXRe, c.MultiFieldXIm, c.MultiFieldYRe, c.MultiFieldYIm, c.MultiFieldZRe, c.MultiFieldZIm}
		cloneF64(g)
		c.DirectFieldXRe, c.DirectFieldXIm, c.DirectFieldYRe, c.DirectFieldYIm, c.DirectFieldZRe, c.DirectFieldZIm = g[0], g[1], g[2], g[3], g[4], g[5]
		c.MultiFieldXRe, c.MultiFieldXIm, c.MultiFieldYRe, c.MultiFieldYIm, c.MultiFieldZRe, c.MultiFieldZIm = g[6], g[7], g[8], g[9], g[10], g[11]
		c.DirectCount, c.MultiCount = slices.Clone(c.DirectCount), slices.Clone(c.MultiCount)
		c.VisibilityRejectCount, c.UtdRejectCount = slices.Clone(c.VisibilityRejectCount), slices.Clone(c.UtdRejectCount)
		r = &c
	}
	return r, k.OutputBytes(0, 0)
}

// OutputBytes is one device partial: sixteen values per cell.
func (k dfrCoherentKernel) OutputBytes(_, _ int) int { return k.Grid.Cells() * 16 * 4 }

func (k dfrCoherentKernel) Add(acc, part any) (any, error) {
	a := acc.(*rf.CoherentResult)
	return a, shard.MergeCoherent(a, part.(*rf.CoherentResult))
}

// reflAccumKernel runs accumulate_reflections over rows of the batch. Its
// whole inputs are the material and the batch (a launch reads its rows).
type reflAccumKernel struct{ *shard.AccumulateReflections }

func (k reflAccumKernel) Input(_, _ int, copied bool) (any, int) {
	t := *k.AccumulateReflections
	if copied {
		r := t.Rays
		t.Rays = rf.ReflRays{O: slices.Clone(r.O), D: slices.Clone(r.D), TMax: slices.Clone(r.TMax),
			TxPosition: slices.Clone(r.TxPosition), TxPolarization: slices.Clone(r.TxPolarization),
			Active: slices.Clone(r.Active)}
		t.Material = cloneMaterial(t.Material)
	}
	r := t.Rays
	bytes := 4*(len(r.O)+len(r.D)+len(r.TMax)+len(r.TxPosition)+len(r.TxPolarization)) + len(r.Active)
	if t.Material != nil {
		bytes += 17 * len(t.Material.Gain)
	}
	return &t, bytes
}

func (k reflAccumKernel) Run(s *ref.Scene, in any, lo, hi int) (any, error) {
	t := in.(*shard.AccumulateReflections)
	return rf.AccumulateReflections(rfScene{s}, t.Window(lo, hi), t.Grid, t.Material, t.MaxBounces, t.Options)
}

func (k reflAccumKernel) Output(out any, copied bool) (any, int) {
	r := out.(*rf.ReflResult)
	if copied {
		c := *r
		g := [][]float64{c.Power, c.FieldXRe, c.FieldXIm, c.FieldYRe, c.FieldYIm, c.FieldZRe, c.FieldZIm}
		cloneF64(g)
		c.Power, c.FieldXRe, c.FieldXIm, c.FieldYRe, c.FieldYIm, c.FieldZRe, c.FieldZIm = g[0], g[1], g[2], g[3], g[4], g[5], g[6]
		w := &c.Wedges
		w.RayIndex, w.Prim, w.Depth = slices.Clone(w.RayIndex), slices.Clone(w.Prim), slices.Clone(w.Depth)
		w.Hit, w.Normal, w.Dir = slices.Clone(w.Hit), slices.Clone(w.Normal), slices.Clone(w.Dir)
		w.Source, w.SourcePower, w.InitialDir = slices.Clone(w.Source), slices.Clone(w.SourcePower), slices.Clone(w.InitialDir)
		r = &c
	}
	return r, k.OutputBytes(0, 0)
}

// OutputBytes is one device partial: seven float32 grids and two counters
// (a wedge buffer only ever stays on the master).
func (k reflAccumKernel) OutputBytes(_, _ int) int { return k.Grid.Res0*k.Grid.Res1*7*4 + 8 }

func (k reflAccumKernel) Add(acc, part any) (any, error) {
	a := acc.(*rf.ReflResult)
	return a, shard.MergeReflections(a, part.(*rf.ReflResult))
}

// dfrPathsKernel runs trace_dfr_paths over a transmitter block: its inputs
// are the block's transmitters and the whole receivers, states, material
// and active mask.
type dfrPathsKernel struct{ *shard.TraceDfrPaths }

func (k dfrPathsKernel) Input(lo, hi int, copied bool) (any, int) {
	t := k.Slice(lo, hi)
	if copied {
		t.Tx, t.Rx, t.Active = slices.Clone(t.Tx), slices.Clone(t.Rx), slices.Clone(t.Active)
		t.States, t.Material = cloneStates(t.States), cloneMaterial(t.Material)
		t.Options.TxPolarization = slices.Clone(t.Options.TxPolarization)
	}
	bytes := 4*(len(t.Tx)+len(t.Rx)+len(t.Options.TxPolarization)) + len(t.Active)
	bytes += int(k.statesAndMaterialBytes())
	return t, bytes
}

func (k dfrPathsKernel) statesAndMaterialBytes() int64 {
	c := shard.AccumDfrDirect{Faces: k.Faces, States: k.States, Material: k.Material}
	return c.InputBytes()
}

func (k dfrPathsKernel) Run(s *ref.Scene, in any, _, _ int) (any, error) {
	t := in.(*shard.TraceDfrPaths)
	return rf.TraceDfrPaths(rfScene{s}, t.Tx, t.Rx, t.States, t.Material, t.Active, t.Options)
}

func (k dfrPathsKernel) Output(out any, copied bool) (any, int) {
	p := out.(*rf.DfrPaths)
	if copied {
		c := *p
		c.Valid, c.TxID, c.RxID, c.Order = slices.Clone(p.Valid), slices.Clone(p.TxID), slices.Clone(p.RxID), slices.Clone(p.Order)
		c.Edge0, c.Edge1, c.Edge2 = slices.Clone(p.Edge0), slices.Clone(p.Edge1), slices.Clone(p.Edge2)
		g := [][]float64{c.Delay, c.FieldXRe, c.FieldXIm, c.FieldYRe, c.FieldYIm, c.FieldZRe, c.FieldZIm, c.P0, c.P1, c.P2}
		cloneF64(g)
		c.Delay, c.FieldXRe, c.FieldXIm, c.FieldYRe, c.FieldYIm, c.FieldZRe, c.FieldZIm = g[0], g[1], g[2], g[3], g[4], g[5], g[6]
		c.P0, c.P1, c.P2 = g[7], g[8], g[9]
		p = &c
	}
	return p, p.Capacity * k.RecordRowBytes(p) / max(k.LanesPerTx(), 1)
}

// OutputBytes is the path rows of transmitters [lo, hi).
func (k dfrPathsKernel) OutputBytes(lo, hi int) int { return (hi - lo) * k.RecordRowBytes(nil) }

func (dfrPathsKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
