package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/rf"
)

// refScene adapts the CPU reference scene to rf.Scene.
type refScene struct{ s *ref.Scene }

func (a refScene) NumFaces() int                          { return a.s.NumFaces() }
func (a refScene) Triangle(f int) (p0, p1, p2 [3]float32) { return a.s.Tables().Triangle(f) }
func (a refScene) AnyHit(o, d [3]float32, tmin, tmax float32) bool {
	return a.s.AnyHit(o, d, tmin, tmax)
}
func (a refScene) ClosestHit(o, d [3]float32, tmin, tmax float32) (rf.Hit, bool) {
	h, ok := a.s.Closest(o, d, tmin, tmax)
	return rf.Hit{T: h.T, U: h.U, V: h.V, Prim: h.Prim}, ok
}

// scene is a benchmark scene on the device and on the CPU.
type scene struct {
	name   string
	tables *geom.Tables
	bvh    *accel.BVH
	cpu    rf.Scene
}

func (b *bench) scene(name string, m geom.Mesh) (*scene, error) {
	tb, err := geom.BuildTables([]geom.Mesh{m})
	if err != nil {
		return nil, err
	}
	bvh, err := accel.Build(b.s, tb)
	if err != nil {
		return nil, err
	}
	cpu, err := ref.NewScene(tb)
	if err != nil {
		_ = bvh.Close()
		return nil, err
	}
	return &scene{name: name, tables: tb, bvh: bvh, cpu: refScene{cpu}}, nil
}

func upload[T launch.Elem](s *launch.Stream, src []T) (*launch.Buffer[T], error) {
	buf, err := launch.Alloc[T](s.Device(), max(len(src), 1))
	if err == nil && len(src) > 0 {
		err = buf.Upload(s, src)
	}
	return buf, err
}

func relL2(want, got [][]float64) float64 {
	var num, den float64
	for k := range want {
		for i := range want[k] {
			num += (got[k][i] - want[k][i]) * (got[k][i] - want[k][i])
			den += want[k][i] * want[k][i]
		}
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

func counters(r *rf.AccumResult) map[string]int64 {
	return map[string]int64{"direct": int64(r.DirectCount), "keller": int64(r.KellerCount), "suffix": int64(r.SuffixCount),
		"vis_rejects": int64(r.VisRejects), "utd_rejects": int64(r.UtdRejects), "edge_uses": int64(r.EdgeUses)}
}

func sameCounters(a, b *rf.AccumResult) bool {
	return fmt.Sprint(counters(a)) == fmt.Sprint(counters(b))
}

// urban is the light grid (72,962 ground triangles on z = 0 over [−1, 1]²)
// with boxes standing on it, and n states on the boxes' roof edges: each
// wedge is the roof (prim0, normal +z) and one wall (prim1), exterior angle
// 3π/2, with a source above the roofs.
func urban(boxes, n int) (geom.Mesh, *rf.DfrStates) {
	m := workload.GridMesh(workload.Light.Size, workload.Light.Extent)
	r := rand.New(rand.NewPCG(20260727, 5))
	u := func(lo, hi float64) float32 { return float32(lo + (hi-lo)*r.Float64()) }
	ground := int32(len(m.Faces) / 3)
	type box struct{ x0, x1, y0, y1, h float32 }
	var bs []box
	for range boxes {
		x, y, hx, hy := u(-0.9, 0.9), u(-0.9, 0.9), u(0.02, 0.05), u(0.02, 0.05)
		b := box{x - hx, x + hx, y - hy, y + hy, u(0.1, 0.4)}
		bs = append(bs, b)
		base := int32(len(m.Vertices) / 3)
		for k := range 8 {
			vx, vy, vz := b.x0, b.y0, float32(0)
			if k&1 != 0 {
				vx = b.x1
			}
			if k&2 != 0 {
				vy = b.y1
			}
			if k&4 != 0 {
				vz = b.h
			}
			m.Vertices = append(m.Vertices, vx, vy, vz)
		}
		// roof, +x, −x, +y, −y walls (two triangles each), floor.
		for _, q := range [][4]int32{{4, 5, 7, 6}, {1, 3, 7, 5}, {0, 4, 6, 2}, {2, 6, 7, 3}, {0, 1, 5, 4}, {0, 2, 3, 1}} {
			m.Faces = append(m.Faces, base+q[0], base+q[1], base+q[2], base+q[0], base+q[2], base+q[3])
		}
	}
	st := &rf.DfrStates{}
	for i := range n {
		k := r.IntN(boxes)
		b, face := bs[k], ground+12*int32(k)
		side := r.IntN(4) // +x, −x, +y, −y wall
		var pos, dir, n1 [3]float32
		switch side {
		case 0:
			pos, dir, n1 = [3]float32{b.x1, b.y0, b.h}, [3]float32{0, b.y1 - b.y0, 0}, [3]float32{1, 0, 0}
		case 1:
			pos, dir, n1 = [3]float32{b.x0, b.y0, b.h}, [3]float32{0, b.y1 - b.y0, 0}, [3]float32{-1, 0, 0}
		case 2:
			pos, dir, n1 = [3]float32{b.x0, b.y1, b.h}, [3]float32{b.x1 - b.x0, 0, 0}, [3]float32{0, 1, 0}
		default:
			pos, dir, n1 = [3]float32{b.x0, b.y0, b.h}, [3]float32{b.x1 - b.x0, 0, 0}, [3]float32{0, -1, 0}
		}
		st.EdgeIndex = append(st.EdgeIndex, int32(i))
		st.EdgePos, st.EdgeDir = append(st.EdgePos, pos[:]...), append(st.EdgeDir, dir[:]...)
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, 0), append(st.EdgeTMax, 1)
		st.N0, st.N1 = append(st.N0, 0, 0, 1), append(st.N1, n1[:]...)
		st.Prim0, st.Prim1 = append(st.Prim0, face), append(st.Prim1, face+2+2*int32(side))
		st.ExteriorAngle = append(st.ExteriorAngle, 1.5*math.Pi)
		st.Src = append(st.Src, u(-1, 1), u(-1, 1), 1.5)
		st.SrcPower = append(st.SrcPower, 1)
	}
	return m, st
}

func material(faces int) *rf.DfrMaterial {
	m := rf.DefaultMaterial(faces)
	for i := range faces {
		m.EtaR[i], m.Sigma[i], m.Gain[i] = 3, 0.01, 0.9
	}
	return m
}

func (b *bench) all(counts []int) ([]caseResult, error) {
	if b.wanted("direct_fixture") {
		if err := b.fixture(counts); err != nil {
			return nil, fmt.Errorf("fixture: %w", err)
		}
	}
	if b.wantsUrban() {
		mesh, st := urban(64, 256)
		sc, err := b.scene("urban", mesh)
		if err != nil {
			return nil, err
		}
		err = b.urbanCases(sc, st)
		_ = sc.bvh.Close()
		if err != nil {
			return nil, fmt.Errorf("urban: %w", err)
		}
	}
	if b.wanted("reflections_light") {
		mesh, o, d := workload.Light.Build()
		sc, err := b.scene("light", mesh)
		if err != nil {
			return nil, err
		}
		err = b.reflections(sc, "reflections_light", o, d, workload.Light.MaxBounces, -0.5, 16384)
		_ = sc.bvh.Close()
		if err != nil {
			return nil, fmt.Errorf("light: %w", err)
		}
	}
	if b.wanted("reflections_compute") {
		mesh, o, d := workload.Compute.Build()
		sc, err := b.scene("compute", mesh)
		if err != nil {
			return nil, err
		}
		err = b.reflections(sc, "reflections_compute", o, d, workload.Compute.MaxBounces, 0, 2048)
		_ = sc.bvh.Close()
		if err != nil {
			return nil, fmt.Errorf("compute: %w", err)
		}
	}
	return b.results, nil
}

// fixture times accum_dfr_direct on the §10.1 fixture at each sample count.
func (b *bench) fixture(counts []int) error {
	sc, err := b.scene("fixture", geom.Mesh{Vertices: []float32{-1, -1, 0, 1, -1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2}})
	if err != nil {
		return err
	}
	defer sc.bvh.Close()
	_, st, _ := testscene.AccumFixture()
	g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 4}
	states, err := upload(b.s, accel.PackDfrStates(st, 2, nil, nil, 1, sc.tables.Triangle))
	if err != nil {
		return err
	}
	defer states.Close()
	out := accel.DfrAccumOut{}
	if out.Grids, err = launch.Alloc[float32](b.s.Device(), 7*16); err != nil {
		return err
	}
	defer out.Grids.Close()
	if out.Counters, err = launch.Alloc[int32](b.s.Device(), 7); err != nil {
		return err
	}
	defer out.Counters.Close()
	for _, n := range counts {
		opt := rf.DefaultAccumOptions()
		opt.DirectSamples, opt.Seed, opt.LaneCount = n, 17, n
		in := accel.DfrAccumLaunch{States: states, NumStates: 2, Grid: g, Options: opt}
		t, err := b.time(func() error { return sc.bvh.AccumDfrDirect(b.s, in, out) })
		if err != nil {
			return err
		}
		grids, ctr := make([]float32, 7*16), make([]int32, 7)
		if err := out.Grids.Download(b.s, grids); err != nil {
			return err
		}
		if err := out.Counters.Download(b.s, ctr); err != nil {
			return err
		}
		got := accel.DecodeDfrAccum(grids, ctr, 4, 4)
		c := caseResult{Name: fmt.Sprintf("direct_fixture_%d", n), Op: "accum_dfr_direct", Scene: "fixture", Lanes: n, Cells: 16,
			Ms: t, Counters: counters(got)}
		c.Check.CountersEqual = got.DirectCount == int32(n) && got.EdgeUses == int32(n) && got.VisRejects == 0 && got.UtdRejects == 0
		c.Check.Note = "every lane commits (the fixture's law)"
		c.Check.Launch = "the timed launch's output"
		if n <= b.checkMax {
			want, err := directReference(sc.cpu, st, g, opt, runtime.GOMAXPROCS(0))
			if err != nil {
				return err
			}
			c.Check = check{Launch: "the timed launch's output", Lanes: n, CountersEqual: sameCounters(want, got),
				GridRelL2: relL2([][]float64{want.Power, want.FieldXRe}, [][]float64{got.Power, got.FieldXRe}), Note: "counters; power and field_x_re grids"}
		}
		b.record(c, sc.bvh)
	}
	return nil
}

// directReference is rf.AccumDfrDirect over the lane window of opt,
// split into up to parts windows run concurrently and added in lane order:
// counters exact, grids equal up to float64 summation order (the windows
// law of rf.AccumDfrDirect). The 67,108,864-sample fixture takes about 40 s
// of one core.
func directReference(sc rf.Scene, st *rf.DfrStates, g rf.DfrGrid, opt rf.AccumOptions, parts int) (*rf.AccumResult, error) {
	parts = max(1, min(parts, opt.LaneCount/(1<<16)))
	res, errs := make([]*rf.AccumResult, parts), make([]error, parts)
	var wg sync.WaitGroup
	for k := range parts {
		w := opt
		w.LaneOffset = opt.LaneOffset + int(int64(opt.LaneCount)*int64(k)/int64(parts))
		w.LaneCount = opt.LaneOffset + int(int64(opt.LaneCount)*int64(k+1)/int64(parts)) - w.LaneOffset
		wg.Go(func() { res[k], errs[k] = rf.AccumDfrDirect(sc, st, g, nil, nil, w) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, r := range res[1:] {
		if err := res[0].Add(r); err != nil {
			return nil, err
		}
	}
	return res[0], nil
}

// urbanCases runs accum_dfr_direct, accum_dfr_coherent_direct and
// trace_dfr_paths over the urban scene, receivers 0.05 above the ground.
func (b *bench) urbanCases(sc *scene, st *rf.DfrStates) error {
	mat := material(sc.tables.NumFaces())
	grid := func(res int) rf.DfrGrid {
		return rf.DfrGrid{Axis: 2, Position: 0.05, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: res, Res1: res}
	}
	if b.wanted("direct_urban_mixed") || b.wanted("direct_urban_windows") {
		if err := b.directUrban(sc, st, mat, grid(128)); err != nil {
			return err
		}
	}
	if b.wanted("coherent_urban") {
		if err := b.coherent(sc, st, mat, grid(256)); err != nil {
			return err
		}
	}
	if b.wanted("paths_urban") {
		return b.paths(sc, st, mat)
	}
	return nil
}
