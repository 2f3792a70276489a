package replica_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// rfWork is an RF workload over the fixture's scene: states on edges above
// the grid plane z = 0 under sources at z = 2.5, a 12×12 grid, a
// reflecting material, rays, transmitters and receivers.
type rfWork struct {
	tables *geom.Tables
	states *rf.DfrStates
	grid   rf.DfrGrid
	mat    *rf.DfrMaterial
	opt    rf.AccumOptions
	rays   rf.ReflRays
	rgrid  rf.AccumGrid
	ropt   rf.ReflOptions
	tx, rx []float32
	active []bool
}

func newRFWork(t *testing.T, f *fixture) *rfWork {
	t.Helper()
	tb, err := geom.BuildTables(f.meshes)
	require.NoError(t, err)
	w := &rfWork{tables: tb, states: &rf.DfrStates{}}
	r := f.rng
	u := func(lo, hi float64) float32 { return float32(lo + (hi-lo)*r.Float64()) }
	st := w.states
	for s := range 6 {
		st.EdgeIndex = append(st.EdgeIndex, int32(s))
		st.EdgePos = append(st.EdgePos, u(-1, 1), u(-1, 1), u(0.8, 1.3))
		a := u(0, 2*math.Pi)
		st.EdgeDir = append(st.EdgeDir, float32(math.Cos(float64(a))), float32(math.Sin(float64(a))), 0)
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, -0.5), append(st.EdgeTMax, 0.5)
		st.N0, st.N1 = append(st.N0, 0, 0, 1), append(st.N1, 0, 1, 0)
		st.Prim0, st.Prim1 = append(st.Prim0, int32(r.IntN(8))), append(st.Prim1, -1)
		st.ExteriorAngle = append(st.ExteriorAngle, u(3.5, 5.5))
		st.Src = append(st.Src, u(-1, 1), u(-1, 1), 2.5)
		st.SrcPower = append(st.SrcPower, 1)
		w.active = append(w.active, s != 3)
	}
	w.grid = rf.DfrGrid{Axis: 2, Coord0Min: -1.5, Coord0Max: 1.5, Coord1Min: -1.5, Coord1Max: 1.5, Res0: 12, Res1: 12}
	w.mat = rf.DefaultMaterial(tb.NumFaces())
	for i := range w.mat.EtaR {
		w.mat.EtaR[i], w.mat.Sigma[i] = 5, 0.01
	}
	w.opt = rf.DefaultAccumOptions()
	w.opt.DirectSamples, w.opt.KellerSamples, w.opt.SuffixSamples, w.opt.Seed = 30000, 6000, 6000, 7
	o, d, tmax := testscene.RandomRays(r, tb, 20000)
	w.rays = rf.ReflRays{O: o, D: d, TMax: tmax, TxPosition: o, Active: make([]bool, len(tmax))}
	for i := range w.rays.Active {
		w.rays.Active[i] = i%13 != 7
	}
	w.rgrid = rf.AccumGrid{Axis: 2, Coord0Min: -1.5, Coord0Max: 1.5, Coord1Min: -1.5, Coord1Max: 1.5, Res0: 12, Res1: 12}
	w.ropt = rf.DefaultReflOptions()
	w.ropt.IncludeLOS, w.ropt.SolidAnglePerRay = true, 0.01
	for range 5 {
		w.tx = append(w.tx, u(-1, 1), u(-1, 1), 2.5)
	}
	for range 9 {
		w.rx = append(w.rx, u(-1.4, 1.4), u(-1.4, 1.4), u(0.05, 0.5))
	}
	return w
}

// requireRFSteps fails early, with the reason, when the CUDA replicas do
// not run the RF tasks.
func requireRFSteps(t *testing.T, l *shard.Layer) {
	t.Helper()
	m, err := l.MasterReplica()
	require.NoError(t, err)
	p, _, err := m.Replicate(&shard.AccumulateReflections{})
	if errors.Is(err, shard.ErrUnsupported) {
		t.Fatalf("the CUDA replicas do not run the RF tasks (%v): their steps must hand them to the RF steps", err)
	}
	require.NoError(t, err)
	p.Release()
}

func rfRelL2(want, got [][]float64) float64 {
	var num, den float64
	for k := range want {
		for i := range want[k] {
			d := got[k][i] - want[k][i]
			num, den = num+d*d, den+want[k][i]*want[k][i]
		}
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// TestGPURFLaneChunksFoldOnTheirDevice: lane-chunked accum_dfr_direct on
// two GPUs equals the one-device launch; each device adds its chunks into
// its resident partial, the master reads the remote's where it lies (no
// gather) and downloads the folded total once; a second call allocates
// nothing.
func TestGPURFLaneChunksFoldOnTheirDevice(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := newRFWork(t, f)
	o := w.opt
	o.LaneCount = o.DirectSamples + o.KellerSamples + o.SuffixSamples
	want, err := f.ref.bvh.AccumDfrDirectHost(f.ref.s, w.states, w.grid, nil, w.active, o, w.tables.NumFaces(), w.tables.Triangle)
	require.NoError(t, err)
	require.Positive(t, want.EdgeUses, "the workload commits nothing")

	l, reps := f.layer(t, shard.Options{ChunkRays: 4096, MinLanesPerDevice: 1})
	requireRFSteps(t, l)
	task := func() *shard.AccumDfrDirect {
		return &shard.AccumDfrDirect{Faces: w.tables.NumFaces(), States: w.states, Grid: w.grid, Active: w.active, Options: w.opt}
	}
	grids := func(r *rf.AccumResult) [][]float64 {
		return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
	}
	var allocated []int64
	for call := range 2 {
		s0, s1 := reps[0].Stats(), reps[1].Stats()
		got, err := shard.RunAccumDfrDirect(ctx, l, task())
		require.NoError(t, err)
		assert.Equal(t, []int32{want.DirectCount, want.KellerCount, want.SuffixCount, want.VisRejects, want.EdgeVisRejects, want.UtdRejects, want.EdgeUses},
			[]int32{got.DirectCount, got.KellerCount, got.SuffixCount, got.VisRejects, got.EdgeVisRejects, got.UtdRejects, got.EdgeUses})
		assert.LessOrEqual(t, rfRelL2(grids(want), grids(got)), 1e-6)
		d := l.LastDispatch()
		require.Equal(t, shard.ModeLaneChunked, d.Mode)
		chunks := func(s shard.Shard) int64 { return int64((s.Len() + 4095) / 4096) }
		assert.Equal(t, chunks(d.Shards[1]), reps[1].Stats().Launches-s1.Launches, "remote launches")
		assert.Equal(t, chunks(d.Shards[0]), reps[0].Stats().Launches-s0.Launches, "master launches")
		assert.Zero(t, reps[1].Stats().Gathered-s1.Gathered, "the remote's partial was copied")
		assert.Equal(t, int64(4*(2*w.grid.Cells()+7)), reps[0].Stats().Downloaded-s0.Downloaded, "the master downloads the folded total once")
		assert.Zero(t, reps[1].Stats().Downloaded-s1.Downloaded)
		if call == 1 {
			assert.Equal(t, allocated, f.allocated(t), "the second call allocated")
		}
		allocated = f.allocated(t)
	}
	assert.NoError(t, l.Poisoned())
}

// TestGPURFOperationsMatchTheDeviceHostPath: the four RF operations sharded
// over two GPUs against the one-device host launchers on the master.
func TestGPURFOperationsMatchTheDeviceHostPath(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := newRFWork(t, f)
	faces, tri := w.tables.NumFaces(), w.tables.Triangle
	l, reps := f.layer(t, shard.Options{MinLanesPerDevice: 1, MinRaysPerDevice: 1})
	requireRFSteps(t, l)

	co := rf.DefaultCoherentOptions()
	co.LaneCount = w.states.StateCount() * w.grid.Cells()
	wantC, err := f.ref.bvh.AccumDfrCoherentHost(f.ref.s, w.states, w.grid, w.mat, w.active, co, faces, tri)
	require.NoError(t, err)
	co.LaneCount = -1
	gotC, err := shard.RunAccumDfrCoherentDirect(ctx, l, &shard.AccumDfrCoherentDirect{Faces: faces, States: w.states,
		Grid: w.grid, Material: w.mat, Active: w.active, Options: co})
	require.NoError(t, err)
	require.Equal(t, shard.ModeLaneSharded, l.LastDispatch().Mode)
	assert.Equal(t, wantC.DirectCount, gotC.DirectCount)
	assert.Equal(t, wantC.VisibilityRejectCount, gotC.VisibilityRejectCount)
	assert.Equal(t, wantC.UtdRejectCount, gotC.UtdRejectCount)
	cg := func(r *rf.CoherentResult) [][]float64 {
		return [][]float64{r.DirectFieldXRe, r.DirectFieldXIm, r.DirectFieldYRe, r.DirectFieldYIm, r.DirectFieldZRe, r.DirectFieldZIm}
	}
	assert.LessOrEqual(t, rfRelL2(cg(wantC), cg(gotC)), 1e-5)

	wantR, err := f.ref.bvh.AccumulateReflectionsHost(f.ref.s, w.rays, w.rgrid, w.mat, 3, w.ropt, faces)
	require.NoError(t, err)
	require.Positive(t, wantR.ReflectionCount)
	gotR, err := shard.RunAccumulateReflections(ctx, l, &shard.AccumulateReflections{Faces: faces, Rays: w.rays,
		Grid: w.rgrid, Material: w.mat, MaxBounces: 3, Options: w.ropt})
	require.NoError(t, err)
	require.Equal(t, shard.ModeBatchSharded, l.LastDispatch().Mode)
	assert.Equal(t, wantR.ReflectionCount, gotR.ReflectionCount)
	assert.Equal(t, wantR.RayCount, gotR.RayCount)
	rg := func(r *rf.ReflResult) [][]float64 {
		return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
	}
	assert.LessOrEqual(t, rfRelL2(rg(wantR), rg(gotR)), 1e-5)

	popt := rf.DefaultPathOptions()
	popt.Layout = rf.SourceLane
	wantP, err := f.ref.bvh.TraceDfrPathsHost(f.ref.s, w.tx, w.rx, w.states, w.mat, w.active, popt, faces, tri)
	require.NoError(t, err)
	require.Positive(t, wantP.Count)
	gotP, err := shard.RunTraceDfrPaths(ctx, l, &shard.TraceDfrPaths{Faces: faces, Tx: w.tx, Rx: w.rx, States: w.states,
		Material: w.mat, Active: w.active, Options: popt})
	require.NoError(t, err)
	require.Equal(t, shard.ModeSharded, l.LastDispatch().Mode)
	assert.Equal(t, wantP, gotP, "SourceLane rows")
	assert.Positive(t, reps[1].Stats().Gathered, "the remote never gathered")
	for _, r := range []*replica.Replica{reps[0], reps[1]} {
		assert.Positive(t, r.Stats().Launches, "cuda:%d never launched", r.Device())
	}
}
