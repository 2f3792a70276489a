package rayd_test

import (
	"math"
	"math/rand/v2"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/rf"
)

// rfProblem is a random RF workload: a ground quad (faces 0, 1) under boxes
// and a triangle soup, states on edges above the ground, a grid, a material
// and rays. The draws make every lane outcome frequent: commits of the
// three kinds, visibility and UTD rejects, inactive states, invalid faces.
type rfProblem struct {
	meshes  []rayd.Mesh
	faces   int
	states  *rf.DfrStates
	grid    rf.DfrGrid
	mat     *rf.DfrMaterial
	active  []bool
	opt     rf.AccumOptions
	rays    rf.ReflRays
	rgrid   rf.AccumGrid
	bounces int
	ropt    rf.ReflOptions
	tx, rx  []float32
	popt    rf.PathOptions
	pactive []bool
}

func uni(r *rand.Rand, lo, hi float64) float32 { return float32(lo + (hi-lo)*r.Float64()) }

func unit(r *rand.Rand) [3]float32 {
	v := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	n := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])
	return [3]float32{float32(v[0] / n), float32(v[1] / n), float32(v[2] / n)}
}

func randomRFProblem(r *rand.Rand, largeGrid bool) rfProblem {
	ground := rayd.Mesh{Vertices: []float32{-3, -3, 0, 3, -3, 0, 3, 3, 0, -3, 3, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	soup := testscene.Soup(r, 24, 0.25)
	for i := 2; i < len(soup.Vertices); i += 3 {
		soup.Vertices[i] = soup.Vertices[i]*0.6 + 1.2
	}
	box := testscene.Box([3]float32{uni(r, -1, 1), uni(r, -1, 1), 0.5}, [3]float32{0.3, 0.2, 0.4})
	p := rfProblem{meshes: []rayd.Mesh{ground, box, soup}}
	p.faces = 2 + 12 + 24
	S := 1 + r.IntN(6)
	st := &rf.DfrStates{}
	for s := range S {
		st.EdgeIndex = append(st.EdgeIndex, int32(100+s))
		st.EdgePos = append(st.EdgePos, uni(r, -1.5, 1.5), uni(r, -1.5, 1.5), uni(r, 0.2, 1.6))
		d := unit(r)
		scale := uni(r, 0.5, 2)
		st.EdgeDir = append(st.EdgeDir, d[0]*scale, d[1]*scale, d[2]*scale)
		tmin := uni(r, -1, 0)
		tmax := tmin + uni(r, 0.05, 2)
		if r.IntN(10) == 0 {
			tmax = tmin - 0.1 // negative length: UTD rejects
		}
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, tmin), append(st.EdgeTMax, tmax)
		n0, n1 := unit(r), unit(r)
		st.N0, st.N1 = append(st.N0, n0[:]...), append(st.N1, n1[:]...)
		pick := func() int32 {
			switch r.IntN(5) {
			case 0, 1:
				return int32(r.IntN(2)) // the ground: suffix reflections land
			case 2:
				return -1
			case 3:
				return int32(p.faces + r.IntN(3)) // out of range
			}
			return int32(r.IntN(p.faces))
		}
		st.Prim0, st.Prim1 = append(st.Prim0, pick()), append(st.Prim1, pick())
		st.ExteriorAngle = append(st.ExteriorAngle, uni(r, 0.3, 2*math.Pi))
		st.Src = append(st.Src, uni(r, -2, 2), uni(r, -2, 2), uni(r, 1.8, 3))
		pw := uni(r, 0.1, 2)
		if r.IntN(12) == 0 {
			pw = 0
		}
		st.SrcPower = append(st.SrcPower, pw)
	}
	p.states = st
	switch r.IntN(3) {
	case 0:
	case 1:
		p.active = []bool{r.IntN(4) != 0}
	default:
		for range S {
			p.active = append(p.active, r.IntN(4) != 0)
		}
	}
	res0, res1 := 1+r.IntN(9), 1+r.IntN(9)
	if largeGrid {
		res0, res1 = 20+r.IntN(30), 20+r.IntN(30)
	}
	axis := 2
	if r.IntN(4) == 0 {
		axis = r.IntN(2)
	}
	lo0, lo1 := uni(r, -3, -1), uni(r, -3, -1)
	p.grid = rf.DfrGrid{Axis: axis, Position: float64(uni(r, 0.05, 0.9)), Coord0Min: float64(lo0), Coord0Max: float64(lo0 + uni(r, 1.5, 5)),
		Coord1Min: float64(lo1), Coord1Max: float64(lo1 + uni(r, 1.5, 5)), Res0: res0, Res1: res1}
	if r.IntN(3) == 0 {
		p.grid.CellArea = float64(uni(r, 0.01, 0.5))
	}
	m := &rf.DfrMaterial{}
	for f := range p.faces {
		m.EtaR = append(m.EtaR, uni(r, 1.5, 7))
		m.Sigma = append(m.Sigma, uni(r, 0, 0.2))
		m.MuR = append(m.MuR, uni(r, 0.8, 1.2))
		g := uni(r, 0.2, 1.5)
		if r.IntN(8) == 0 {
			g = -0.5
		}
		m.Gain = append(m.Gain, g)
		m.Valid = append(m.Valid, f < 2 || r.IntN(6) != 0)
	}
	p.mat = m
	p.opt = rf.DefaultAccumOptions()
	p.opt.Wavelength = float64(uni(r, 0.1, 2))
	p.opt.DirectSamples, p.opt.KellerSamples, p.opt.SuffixSamples = r.IntN(3000), r.IntN(3000), r.IntN(3000)
	p.opt.Seed = int64(r.Uint32() >> 1)
	p.randomRays(r)
	p.randomPaths(r)
	return p
}

func (p *rfProblem) randomRays(r *rand.Rand) {
	n := 200 + r.IntN(800)
	rays := &p.rays
	for i := range n {
		o := [3]float32{uni(r, -2, 2), uni(r, -2, 2), uni(r, 0.3, 2.5)}
		d := unit(r)
		if d[2] > 0 && r.IntN(3) != 0 {
			d[2] = -d[2] // mostly downwards: onto the ground and the boxes
		}
		rays.O, rays.D = append(rays.O, o[:]...), append(rays.D, d[0]*2, d[1]*2, d[2]*2)
		rays.TxPosition = append(rays.TxPosition, o[0]+uni(r, -0.1, 0.1), o[1], o[2])
		tm := float32(math.Inf(1))
		if i%5 == 1 {
			tm = uni(r, 0.1, 3)
		}
		rays.TMax = append(rays.TMax, tm)
		rays.Active = append(rays.Active, r.IntN(7) != 0)
		pol := unit(r)
		rays.TxPolarization = append(rays.TxPolarization, pol[:]...)
	}
	if r.IntN(2) == 0 {
		rays.TMax, rays.TxPolarization = nil, nil
	}
	p.bounces = r.IntN(5)
	p.rgrid = rf.AccumGrid{Axis: p.grid.Axis, Position: p.grid.Position, Coord0Min: p.grid.Coord0Min, Coord0Max: p.grid.Coord0Max,
		Coord1Min: p.grid.Coord1Min, Coord1Max: p.grid.Coord1Max, Res0: p.grid.Res0, Res1: p.grid.Res1}
	p.ropt = rf.DefaultReflOptions()
	p.ropt.Wavelength = p.opt.Wavelength
	p.ropt.SolidAnglePerRay = float64(uni(r, 0.001, 0.1))
	p.ropt.IncludeLOS = r.IntN(2) == 0
}

func (p *rfProblem) randomPaths(r *rand.Rand) {
	T, R := 1+r.IntN(3), 3+r.IntN(12)
	for range T {
		p.tx = append(p.tx, uni(r, -1, 1), uni(r, -1, 1), 2.5)
	}
	for range R {
		p.rx = append(p.rx, uni(r, -2.5, 2.5), uni(r, -2.5, 2.5), uni(r, 0.05, 1))
	}
	p.popt = rf.DefaultPathOptions()
	p.popt.Wavelength = p.opt.Wavelength
	S := p.states.StateCount()
	M := S
	if r.IntN(3) == 0 {
		p.popt.MaxPaths = 1 + r.IntN(S)
		M = p.popt.MaxPaths
	}
	if r.IntN(2) == 0 {
		p.popt.Layout = rf.SourceLane
	}
	if r.IntN(2) == 0 {
		for range T {
			pol := unit(r)
			p.popt.TxPolarization = append(p.popt.TxPolarization, pol[:]...)
		}
	}
	for range M {
		p.pactive = append(p.pactive, r.IntN(5) != 0)
	}
}
