package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// arena holds the device buffers of one case.
type arena struct {
	s    *launch.Stream
	bufs []interface{ Close() error }
	err  error
}

func alloc[T launch.Elem](a *arena, n int) *launch.Buffer[T] {
	if a.err != nil {
		return nil
	}
	b, err := launch.Alloc[T](a.s.Device(), max(n, 1))
	if err != nil {
		a.err = err
		return nil
	}
	a.bufs = append(a.bufs, b)
	return b
}

func up[T launch.Elem](a *arena, src []T) *launch.Buffer[T] {
	b := alloc[T](a, len(src))
	if a.err == nil && len(src) > 0 {
		a.err = b.Upload(a.s, src)
	}
	return b
}

func down[T launch.Elem](a *arena, b *launch.Buffer[T], n int) []T {
	out := make([]T, n)
	if a.err == nil {
		a.err = b.Download(a.s, out)
	}
	return out
}

func (a *arena) close() error {
	err := a.err
	for _, b := range a.bufs {
		err = errors.Join(err, b.Close())
	}
	return err
}

// directUrban: accum_dfr_direct with direct, Keller and suffix lanes over the
// urban scene.
func (b *bench) directUrban(sc *scene, st *rf.DfrStates, mat *rf.DfrMaterial, g rf.DfrGrid) (err error) {
	a := &arena{s: b.s}
	defer func() { err = errors.Join(err, a.close()) }()
	faces, S, cells := sc.tables.NumFaces(), st.StateCount(), g.Cells()
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples, opt.KellerSamples, opt.SuffixSamples, opt.Seed = 1<<21, 1<<21, 1<<21, 5
	opt.LaneCount = 3 << 21
	in := accel.DfrAccumLaunch{States: up(a, accel.PackDfrStates(st, S, mat, nil, faces, sc.tables.Triangle)), NumStates: S, Grid: g, Options: opt}
	out := accel.DfrAccumOut{Grids: alloc[float32](a, 7*cells), Counters: alloc[int32](a, 7)}
	if a.err != nil {
		return a.err
	}
	variants := []func() error{func() error { return sc.bvh.AccumDfrDirect(b.s, in, out) }}
	var win *windowed
	if b.wanted("direct_urban_windows") {
		win = newWindowed(a, sc, in, cells)
		if a.err != nil {
			return a.err
		}
		variants = append(variants, win.run)
	}
	ts, err := b.timeEach(variants...)
	if err != nil {
		return err
	}
	res := accel.DecodeDfrAccum(down(a, out.Grids, 7*cells), down(a, out.Counters, 7), g.Res0, g.Res1)
	c := caseResult{Name: "direct_urban_mixed", Op: "accum_dfr_direct", Scene: "urban: 256 roof-edge states, D = K = X = 2^21, 128x128 cells",
		Lanes: opt.LaneCount, Cells: cells, Ms: ts[0], Counters: counters(res)}
	c.Check.CountersEqual, c.Check.Note = true, "three 8,192-lane windows (direct, Keller, suffix lanes); counters; power and field_x_re grids"
	c.Check.Launch = "the timed kernel, scene, grid, material and options rerun over lane windows (LaneOffset/LaneCount)"
	for _, w := range [][2]int{{0, 8192}, {1 << 21, 8192}, {2 << 21, 8192}} {
		o := opt
		o.LaneOffset, o.LaneCount = w[0], w[1]
		got, err := sc.bvh.AccumDfrDirectHost(b.s, st, g, mat, nil, o, faces, sc.tables.Triangle)
		if err != nil {
			return err
		}
		want, err := rf.AccumDfrDirect(sc.cpu, st, g, mat, nil, o)
		if err != nil {
			return err
		}
		c.Check.Lanes += w[1]
		c.Check.CountersEqual = c.Check.CountersEqual && sameCounters(want, got)
		c.Check.GridRelL2 = max(c.Check.GridRelL2, relL2([][]float64{want.Power, want.FieldXRe}, [][]float64{got.Power, got.FieldXRe}))
	}
	b.record(c, sc.bvh)
	if win != nil {
		w := win.result(a, res, g)
		w.Ms = ts[1]
		b.record(w, sc.bvh)
	}
	return nil
}

// windowed runs the urban accum_dfr_direct launch as two windows into one
// output: the direct lanes [0, D), which take the direct-only kernel, then
// the Keller and suffix lanes [D, D+K+X) added to them (Accumulate).
type windowed struct {
	s           *launch.Stream
	bvh         *accel.BVH
	first, rest accel.DfrAccumLaunch
	out         accel.DfrAccumOut
	lanes       int
}

func newWindowed(a *arena, sc *scene, in accel.DfrAccumLaunch, cells int) *windowed {
	w := &windowed{s: a.s, bvh: sc.bvh, first: in, rest: in, lanes: in.Options.LaneCount}
	d := in.Options.DirectSamples
	w.first.Options.LaneOffset, w.first.Options.LaneCount = 0, d
	w.rest.Options.LaneOffset, w.rest.Options.LaneCount = d, w.lanes-d
	w.rest.Accumulate = true
	poison := make([]float32, 7*cells)
	for i := range poison {
		poison[i] = float32(math.NaN())
	}
	w.out = accel.DfrAccumOut{Grids: up(a, poison), Counters: up(a, []int32{-1, -1, -1, -1, -1, -1, -1})}
	return w
}

func (w *windowed) run() error {
	if err := w.bvh.AccumDfrDirect(w.s, w.first, w.out); err != nil {
		return err
	}
	return w.bvh.AccumDfrDirect(w.s, w.rest, w.out)
}

// result is the windowed case, checked against one, the one-call launch's
// result: counters equal, grids by relative L2.
func (w *windowed) result(a *arena, one *rf.AccumResult, g rf.DfrGrid) caseResult {
	cells := g.Cells()
	got := accel.DecodeDfrAccum(down(a, w.out.Grids, 7*cells), down(a, w.out.Counters, 7), g.Res0, g.Res1)
	return caseResult{Name: "direct_urban_windows", Op: "accum_dfr_direct",
		Scene: "urban as direct_urban_mixed, two windows: [0, D) direct-only kernel, [D, D+K+X) added to it",
		Lanes: w.lanes, Cells: cells, Counters: counters(got),
		Check: check{Launch: "the timed windows' output (poisoned before the first launch)", Lanes: w.lanes, CountersEqual: sameCounters(one, got),
			GridRelL2: relL2([][]float64{one.Power, one.FieldXRe}, [][]float64{got.Power, got.FieldXRe}),
			Note:      "against the one-call launch's output: counters; power and field_x_re grids"}}
}

// coherent: accum_dfr_coherent_direct over S·cells lanes.
func (b *bench) coherent(sc *scene, st *rf.DfrStates, mat *rf.DfrMaterial, g rf.DfrGrid) (err error) {
	a := &arena{s: b.s}
	defer func() { err = errors.Join(err, a.close()) }()
	faces, S, cells := sc.tables.NumFaces(), st.StateCount(), g.Cells()
	opt := rf.DefaultCoherentOptions()
	opt.Wavelength, opt.LaneCount = 0.05, S*cells
	in := accel.DfrCoherentLaunch{States: up(a, accel.PackDfrStates(st, S, mat, nil, faces, sc.tables.Triangle)), NumStates: S, Grid: g, Options: opt}
	out := accel.DfrCoherentOut{Grids: alloc[float32](a, 12*cells), Counts: alloc[int32](a, 3*cells)}
	if a.err != nil {
		return a.err
	}
	t, err := b.time(func() error { return sc.bvh.AccumDfrCoherentDirect(b.s, in, out) })
	if err != nil {
		return err
	}
	counts := down(a, out.Counts, 3*cells)
	sums := [3]int64{}
	for k := range 3 {
		for _, v := range counts[k*cells : (k+1)*cells] {
			sums[k] += int64(v)
		}
	}
	c := caseResult{Name: "coherent_urban", Op: "accum_dfr_coherent_direct", Scene: "urban: 256 states, 256x256 cells",
		Lanes: opt.LaneCount, Cells: cells, Ms: t,
		Counters: map[string]int64{"direct_count": sums[0], "visibility_reject_count": sums[1], "utd_reject_count": sums[2]}}
	o := opt
	o.LaneCount = 1 << 16
	got, err := sc.bvh.AccumDfrCoherentHost(b.s, st, g, mat, nil, o, faces, sc.tables.Triangle)
	if err != nil {
		return err
	}
	want, err := rf.AccumDfrCoherentDirect(sc.cpu, st, g, mat, nil, o)
	if err != nil {
		return err
	}
	c.Check = check{Launch: "the timed kernel, scene, grid, material and options rerun over the first lanes (LaneCount)", Lanes: o.LaneCount, GridRelL2: relL2([][]float64{want.DirectFieldXRe, want.DirectFieldXIm}, [][]float64{got.DirectFieldXRe, got.DirectFieldXIm}),
		CountersEqual: fmt.Sprint(want.DirectCount, want.VisibilityRejectCount, want.UtdRejectCount) == fmt.Sprint(got.DirectCount, got.VisibilityRejectCount, got.UtdRejectCount),
		Note:          "first 65,536 lanes; complex fields (magnitude and phase)"}
	b.record(c, sc.bvh)
	return nil
}

// reflections: accumulate_reflections of the configuration's rays onto a
// 256×256 grid on z = planeZ.
func (b *bench) reflections(sc *scene, name string, o, d []float32, bounces int, planeZ float64, checkRays int) (err error) {
	a := &arena{s: b.s}
	defer func() { err = errors.Join(err, a.close()) }()
	faces, n := sc.tables.NumFaces(), len(o)/3
	g := rf.AccumGrid{Axis: 2, Position: planeZ, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 256, Res1: 256}
	cells := g.Cells()
	mat := material(faces)
	opt := rf.DefaultReflOptions()
	opt.Wavelength, opt.SolidAnglePerRay = 0.05, 4*math.Pi/float64(n)
	ob := up(a, o)
	in := accel.ReflAccumLaunch{O: ob, D: up(a, d), TxPosition: ob, N: n, Material: up(a, accel.PackFaceMaterial(mat, faces)),
		NumFaces: faces, Grid: g, MaxBounces: bounces, Options: opt}
	out := accel.ReflAccumOut{Grids: alloc[float32](a, 7*cells), Counters: alloc[int32](a, 2)}
	if a.err != nil {
		return a.err
	}
	t, err := b.time(func() error { return sc.bvh.AccumulateReflections(b.s, in, out) })
	if err != nil {
		return err
	}
	ctr := down(a, out.Counters, 2)
	c := caseResult{Name: name, Op: "accumulate_reflections", Scene: fmt.Sprintf("%s: %d rays, %d bounces, 256x256 cells", sc.name, n, bounces),
		Lanes: n, Cells: cells, Ms: t, Counters: map[string]int64{"reflection_count": int64(ctr[0])}}
	rays := rf.ReflRays{O: o[:3*checkRays], D: d[:3*checkRays], TxPosition: o[:3*checkRays]}
	got, err := sc.bvh.AccumulateReflectionsHost(b.s, rays, g, mat, bounces, opt, faces)
	if err != nil {
		return err
	}
	want, err := rf.AccumulateReflections(sc.cpu, rays, g, mat, bounces, opt)
	if err != nil {
		return err
	}
	grids := func(r *rf.ReflResult) [][]float64 {
		return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
	}
	c.Check = check{Launch: "the timed kernel, scene, grid, material and options rerun over the first rays", Lanes: checkRays, CountersEqual: want.ReflectionCount == got.ReflectionCount,
		GridRelL2: relL2(grids(want), grids(got)), Note: fmt.Sprintf("first %d rays; reflection count; power and the six field grids", checkRays)}
	b.record(c, sc.bvh)
	return nil
}

// paths: trace_dfr_paths, 4 transmitters × 4,096 receivers × 256 states,
// SourceLane layout.
func (b *bench) paths(sc *scene, st *rf.DfrStates, mat *rf.DfrMaterial) (err error) {
	a := &arena{s: b.s}
	defer func() { err = errors.Join(err, a.close()) }()
	faces, M := sc.tables.NumFaces(), st.StateCount()
	tx := []float32{-0.5, -0.5, 1.5, 0.5, -0.5, 1.5, -0.5, 0.5, 1.5, 0.5, 0.5, 1.5}
	var rx []float32
	for j := range 64 {
		for i := range 64 {
			rx = append(rx, -1+(float32(i)+0.5)/32, -1+(float32(j)+0.5)/32, 0.05)
		}
	}
	active := make([]bool, M)
	for i := range active {
		active[i] = true
	}
	T, R := len(tx)/3, len(rx)/3
	total := T * R * M
	opt := rf.DefaultPathOptions()
	opt.Wavelength, opt.Layout = 0.05, rf.SourceLane
	in := accel.DfrPathsLaunch{States: up(a, accel.PackDfrStates(st, M, mat, active, faces, sc.tables.Triangle)), NumStates: M,
		Rx: up(a, rx), NumRx: R, NumTx: T, Wavelength: opt.Wavelength, Layout: opt.Layout, LaneCount: total}
	out := accel.DfrPathsOut{Rows: alloc[uint32](a, total*accel.PathRowWords), Count: alloc[int32](a, 1), Capacity: total}
	if a.err != nil {
		return a.err
	}
	t, err := b.time(func() error { return sc.bvh.TraceDfrPaths(b.s, in, out) })
	if err != nil {
		return err
	}
	count := down(a, out.Count, 1)
	c := caseResult{Name: "paths_urban", Op: "trace_dfr_paths", Scene: "urban: 4 tx x 4,096 rx x 256 states, SourceLane",
		Lanes: total, Ms: t, Counters: map[string]int64{"count": int64(count[0])}}
	got, err := sc.bvh.TraceDfrPathsHost(b.s, tx[:3], rx[:3*64], st, mat, active, opt, faces, sc.tables.Triangle)
	if err != nil {
		return err
	}
	want, err := rf.TraceDfrPaths(sc.cpu, tx[:3], rx[:3*64], st, mat, active, opt)
	if err != nil {
		return err
	}
	same := want.Count == got.Count
	for i := range want.Valid {
		same = same && want.Valid[i] == got.Valid[i]
	}
	fields := func(p *rf.DfrPaths) [][]float64 {
		return [][]float64{p.FieldXRe, p.FieldXIm, p.FieldYRe, p.FieldYIm, p.FieldZRe, p.FieldZIm}
	}
	c.Check = check{Launch: "the timed kernel, scene, states and layout rerun for 1 transmitter and 64 receivers", Lanes: want.Capacity, CountersEqual: same, GridRelL2: relL2(fields(want), fields(got)),
		Note: "1 tx x 64 rx x 256 states: valid rows identical, fields by relative L2"}
	b.record(c, sc.bvh)
	return nil
}
