package shard_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// rfFixture is a random RF workload over a small scene (a ground quad under
// a box and a triangle soup): states on edges above the ground, a grid, a
// material, a ray batch and transmitters and receivers. The draws make every
// lane outcome frequent (commits of all kinds, visibility and UTD rejects,
// inactive states).
type rfFixture struct {
	meshes []geom.Mesh
	faces  int
	ref    *ref.Scene
	states *rf.DfrStates
	grid   rf.DfrGrid
	mat    *rf.DfrMaterial
	active []bool
	opt    rf.AccumOptions
	copt   rf.CoherentOptions

	rays    rf.ReflRays
	rgrid   rf.AccumGrid
	bounces int
	ropt    rf.ReflOptions

	tx, rx  []float32
	pactive []bool
	popt    rf.PathOptions
}

func rfUni(r *rand.Rand, lo, hi float64) float32 { return float32(lo + (hi-lo)*r.Float64()) }

func rfUnit(r *rand.Rand) [3]float32 {
	v := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	n := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])
	return [3]float32{float32(v[0] / n), float32(v[1] / n), float32(v[2] / n)}
}

// newRFFixture draws a workload with about lanes accum_dfr_direct lanes,
// rows reflection rays and txs transmitters.
func newRFFixture(t testing.TB, r *rand.Rand, lanes, rows, txs int) *rfFixture {
	t.Helper()
	ground := geom.Mesh{Vertices: []float32{-3, -3, 0, 3, -3, 0, 3, 3, 0, -3, 3, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	soup := testscene.Soup(r, 16, 0.3)
	for i := 2; i < len(soup.Vertices); i += 3 {
		soup.Vertices[i] = soup.Vertices[i]*0.6 + 1.2
	}
	box := testscene.Box([3]float32{rfUni(r, -1, 1), rfUni(r, -1, 1), 0.5}, [3]float32{0.3, 0.2, 0.4})
	f := &rfFixture{meshes: []geom.Mesh{ground, box, soup}, faces: 2 + 12 + 16}
	tables, err := geom.BuildTables(f.meshes)
	require.NoError(t, err)
	f.ref, err = ref.NewScene(tables)
	require.NoError(t, err)

	S := 3 + r.IntN(4)
	st := &rf.DfrStates{}
	for s := range S {
		st.EdgeIndex = append(st.EdgeIndex, int32(100+s))
		st.EdgePos = append(st.EdgePos, rfUni(r, -1.5, 1.5), rfUni(r, -1.5, 1.5), rfUni(r, 0.2, 1.6))
		d := rfUnit(r)
		st.EdgeDir = append(st.EdgeDir, d[0], d[1], d[2])
		tmin := rfUni(r, -1, 0)
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, tmin), append(st.EdgeTMax, tmin+rfUni(r, 0.05, 2))
		n0, n1 := rfUnit(r), rfUnit(r)
		st.N0, st.N1 = append(st.N0, n0[:]...), append(st.N1, n1[:]...)
		pick := func() int32 {
			switch r.IntN(4) {
			case 0, 1:
				return int32(r.IntN(2)) // the ground: suffix reflections land
			case 2:
				return -1
			}
			return int32(r.IntN(f.faces))
		}
		st.Prim0, st.Prim1 = append(st.Prim0, pick()), append(st.Prim1, pick())
		st.ExteriorAngle = append(st.ExteriorAngle, rfUni(r, 0.3, 2*math.Pi))
		st.Src = append(st.Src, rfUni(r, -2, 2), rfUni(r, -2, 2), rfUni(r, 1.8, 3))
		st.SrcPower = append(st.SrcPower, rfUni(r, 0.1, 2))
		f.active = append(f.active, r.IntN(5) != 0)
	}
	f.states = st
	f.grid = rf.DfrGrid{Axis: 2, Position: 0.05, Coord0Min: -2.5, Coord0Max: 2.5, Coord1Min: -2.5, Coord1Max: 2.5,
		Res0: 6 + r.IntN(4), Res1: 6 + r.IntN(4)}
	m := &rf.DfrMaterial{}
	for face := range f.faces {
		m.EtaR = append(m.EtaR, rfUni(r, 1.5, 7))
		m.Sigma = append(m.Sigma, rfUni(r, 0, 0.2))
		m.MuR = append(m.MuR, rfUni(r, 0.8, 1.2))
		m.Gain = append(m.Gain, rfUni(r, 0.2, 1.5))
		m.Valid = append(m.Valid, face < 2 || r.IntN(6) != 0)
	}
	f.mat = m
	f.opt = rf.DefaultAccumOptions()
	f.opt.Wavelength = float64(rfUni(r, 0.1, 2))
	f.opt.DirectSamples = lanes / 2
	f.opt.KellerSamples = lanes / 4
	f.opt.SuffixSamples = lanes - f.opt.DirectSamples - f.opt.KellerSamples
	f.opt.Seed = int64(r.Uint32() >> 1)
	f.copt = rf.DefaultCoherentOptions()
	f.copt.Wavelength = f.opt.Wavelength

	for i := range rows {
		o := [3]float32{rfUni(r, -2, 2), rfUni(r, -2, 2), rfUni(r, 0.3, 2.5)}
		d := rfUnit(r)
		if d[2] > 0 && r.IntN(3) != 0 {
			d[2] = -d[2]
		}
		f.rays.O, f.rays.D = append(f.rays.O, o[:]...), append(f.rays.D, d[:]...)
		f.rays.TxPosition = append(f.rays.TxPosition, o[0]+rfUni(r, -0.1, 0.1), o[1], o[2])
		tm := float32(math.Inf(1))
		if i%5 == 1 {
			tm = rfUni(r, 0.1, 3)
		}
		f.rays.TMax = append(f.rays.TMax, tm)
		f.rays.Active = append(f.rays.Active, r.IntN(7) != 0)
		pol := rfUnit(r)
		f.rays.TxPolarization = append(f.rays.TxPolarization, pol[:]...)
	}
	f.bounces = 1 + r.IntN(3)
	g := f.grid
	f.rgrid = rf.AccumGrid{Axis: g.Axis, Position: g.Position, Coord0Min: g.Coord0Min, Coord0Max: g.Coord0Max,
		Coord1Min: g.Coord1Min, Coord1Max: g.Coord1Max, Res0: g.Res0, Res1: g.Res1}
	f.ropt = rf.DefaultReflOptions()
	f.ropt.Wavelength = f.opt.Wavelength
	f.ropt.SolidAnglePerRay = 0.01
	f.ropt.IncludeLOS = true

	for range txs {
		f.tx = append(f.tx, rfUni(r, -1, 1), rfUni(r, -1, 1), 2.5)
		pol := rfUnit(r)
		f.popt.TxPolarization = append(f.popt.TxPolarization, pol[:]...)
	}
	for range 4 + r.IntN(4) {
		f.rx = append(f.rx, rfUni(r, -2.5, 2.5), rfUni(r, -2.5, 2.5), rfUni(r, 0.05, 1))
	}
	f.popt.Wavelength = f.opt.Wavelength
	f.popt.Layout = rf.SourceLane
	f.pactive = append([]bool(nil), f.active...)
	return f
}

// rfRefScene adapts the reference scene to rf.Scene.
type rfRefScene struct{ s *ref.Scene }

func (a rfRefScene) NumFaces() int                          { return a.s.NumFaces() }
func (a rfRefScene) Triangle(f int) (p0, p1, p2 [3]float32) { return a.s.Tables().Triangle(f) }
func (a rfRefScene) AnyHit(o, d [3]float32, tmin, tmax float32) bool {
	return a.s.AnyHit(o, d, tmin, tmax)
}
func (a rfRefScene) ClosestHit(o, d [3]float32, tmin, tmax float32) (rf.Hit, bool) {
	h, ok := a.s.Closest(o, d, tmin, tmax)
	return rf.Hit{T: h.T, U: h.U, V: h.V, Prim: h.Prim}, ok
}

// The four tasks of the fixture.
func (f *rfFixture) direct() *shard.AccumDfrDirect {
	return &shard.AccumDfrDirect{Faces: f.faces, States: f.states, Grid: f.grid, Material: f.mat, Active: f.active, Options: f.opt}
}

func (f *rfFixture) coherent() *shard.AccumDfrCoherentDirect {
	return &shard.AccumDfrCoherentDirect{Faces: f.faces, States: f.states, Grid: f.grid, Material: f.mat, Active: f.active, Options: f.copt}
}

func (f *rfFixture) reflections() *shard.AccumulateReflections {
	return &shard.AccumulateReflections{Faces: f.faces, Rays: f.rays, Grid: f.rgrid, Material: f.mat, MaxBounces: f.bounces, Options: f.ropt}
}

func (f *rfFixture) paths() *shard.TraceDfrPaths {
	return &shard.TraceDfrPaths{Faces: f.faces, Tx: f.tx, Rx: f.rx, States: f.states, Material: f.mat, Active: f.pactive, Options: f.popt}
}

// One CPU run of each operation.
func (f *rfFixture) wantDirect(t testing.TB, o rf.AccumOptions) *rf.AccumResult {
	t.Helper()
	r, err := rf.AccumDfrDirect(rfRefScene{f.ref}, f.states, f.grid, f.mat, f.active, o)
	require.NoError(t, err)
	return r
}

func (f *rfFixture) wantCoherent(t testing.TB, o rf.CoherentOptions) *rf.CoherentResult {
	t.Helper()
	r, err := rf.AccumDfrCoherentDirect(rfRefScene{f.ref}, f.states, f.grid, f.mat, f.active, o)
	require.NoError(t, err)
	return r
}

func (f *rfFixture) wantReflections(t testing.TB, o rf.ReflOptions) *rf.ReflResult {
	t.Helper()
	r, err := rf.AccumulateReflections(rfRefScene{f.ref}, f.rays, f.rgrid, f.mat, f.bounces, o)
	require.NoError(t, err)
	return r
}

func (f *rfFixture) wantPaths(t testing.TB) *rf.DfrPaths {
	t.Helper()
	r, err := rf.TraceDfrPaths(rfRefScene{f.ref}, f.tx, f.rx, f.states, f.mat, f.pactive, f.popt)
	require.NoError(t, err)
	return r
}

// requireRFKernels fails early, with the reason, when the simulated devices
// do not route the RF tasks to their kernels.
func requireRFKernels(t testing.TB, f *rfFixture) {
	t.Helper()
	rep, err := simdev.New(simdev.Config{Devices: 1}).NewReplica(0, true, f.meshes)
	require.NoError(t, err)
	defer func() { require.NoError(t, rep.Close()) }()
	p, _, err := rep.Replicate(f.direct())
	if err != nil {
		t.Fatalf("the simulated devices do not run the RF tasks (%v): simdev's kernelOf must hand them to rfKernelOf", err)
	}
	p.Release()
}

// rfLayer plans a layer on a simulated cluster of count devices and builds
// the fixture's scene on it.
func rfLayer(t testing.TB, f *rfFixture, count int, devices []int, o shard.Options) (*shard.Layer, *simdev.Cluster) {
	t.Helper()
	requireRFKernels(t, f)
	c := simdev.New(simdev.Config{Devices: count})
	l, err := shard.Plan(devices, c, o)
	require.NoError(t, err)
	require.NotNil(t, l, "expected a layer")
	require.NoError(t, l.Build(context.Background(), c.Builder(devices[0], f.meshes)))
	c.ResetStats()
	t.Cleanup(func() {
		require.NoError(t, l.Close())
		require.Zero(t, c.LivePayloads(), "payloads leaked")
	})
	return l, c
}

// rfRelClose checks ‖got − want‖ ≤ tol·‖want‖ over each grid (exact zero
// grids must stay zero).
func rfRelClose(t testing.TB, want, got [][]float64, tol float64, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for k := range want {
		require.Len(t, got[k], len(want[k]), msg)
		var num, den float64
		for i := range want[k] {
			d := got[k][i] - want[k][i]
			num += d * d
			den += want[k][i] * want[k][i]
		}
		require.LessOrEqual(t, math.Sqrt(num), tol*math.Sqrt(den), "%s: grid %d", msg, k)
	}
}

func accumGrids(r *rf.AccumResult) [][]float64 {
	return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
}

func accumCounters(r *rf.AccumResult) []int32 {
	return []int32{r.DirectCount, r.KellerCount, r.SuffixCount, r.VisRejects, r.EdgeVisRejects, r.UtdRejects, r.EdgeUses}
}

func coherentGrids(r *rf.CoherentResult) [][]float64 {
	return [][]float64{r.DirectFieldXRe, r.DirectFieldXIm, r.DirectFieldYRe, r.DirectFieldYIm, r.DirectFieldZRe,
		r.DirectFieldZIm, r.MultiFieldXRe, r.MultiFieldXIm, r.MultiFieldYRe, r.MultiFieldYIm, r.MultiFieldZRe, r.MultiFieldZIm}
}

func coherentCounts(r *rf.CoherentResult) [][]int32 {
	return [][]int32{r.DirectCount, r.MultiCount, r.VisibilityRejectCount, r.UtdRejectCount}
}

func reflGrids(r *rf.ReflResult) [][]float64 {
	return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
}

// gridTol is the grid tolerance against one CPU run: the partials are
// float64 sums, so only the summation order differs.
const gridTol = 1e-12

func requireAccumEqual(t testing.TB, want, got *rf.AccumResult, msg string) {
	t.Helper()
	require.NotNil(t, got, msg)
	require.Equal(t, accumCounters(want), accumCounters(got), "%s: counters", msg)
	rfRelClose(t, accumGrids(want), accumGrids(got), gridTol, msg)
}

func requireCoherentEqual(t testing.TB, want, got *rf.CoherentResult, msg string) {
	t.Helper()
	require.NotNil(t, got, msg)
	require.Equal(t, coherentCounts(want), coherentCounts(got), "%s: counts", msg)
	rfRelClose(t, coherentGrids(want), coherentGrids(got), gridTol, msg)
}

func requireReflEqual(t testing.TB, want, got *rf.ReflResult, msg string) {
	t.Helper()
	require.NotNil(t, got, msg)
	require.Equal(t, want.ReflectionCount, got.ReflectionCount, "%s: reflection_count", msg)
	require.Equal(t, want.RayCount, got.RayCount, "%s: ray_count", msg)
	require.Equal(t, [4]int{want.MaxBounces, want.Res0, want.Res1, want.Wedges.Capacity},
		[4]int{got.MaxBounces, got.Res0, got.Res1, got.Wedges.Capacity}, msg)
	require.Equal(t, want.Wedges.Count, got.Wedges.Count, "%s: wedge count", msg)
	rfRelClose(t, reflGrids(want), reflGrids(got), gridTol, msg)
}

// rfLaunched sums the lanes (rows) launched on devices.
func rfLaunched(c *simdev.Cluster, devices []int) (lanes, launches int) {
	for _, d := range devices {
		st := c.Stats(d)
		lanes += st.RowsLaunched
		launches += st.Launches
	}
	return lanes, launches
}
