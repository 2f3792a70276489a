package rayd_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/rf"
)

// rfReference is rf's float64 reference over a brute-force scene of meshes.
func rfReference(t testing.TB, meshes []rayd.Mesh) rf.Scene {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	return rf.NewTablesScene(tb)
}

// On the CPU backend the four operations are rf's reference over the
// scene's BVH, which answers exactly as brute force: results are identical.
func TestRFOnCPUBackendIsTheReference(t *testing.T) {
	r := testscene.Rand(t)
	ctx := context.Background()
	for i := range 6 {
		p := randomRFProblem(r, i%3 == 2)
		s := cpuScene(t, p.meshes...)
		ref := rfReference(t, p.meshes)

		got, err := s.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
		require.NoError(t, err)
		want, err := rf.AccumDfrDirect(ref, p.states, p.grid, p.mat, p.active, p.opt)
		require.NoError(t, err)
		assert.Equal(t, want, got, "accum_dfr_direct")

		co := rf.DefaultCoherentOptions()
		co.Wavelength = p.opt.Wavelength
		gotC, err := s.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
		require.NoError(t, err)
		wantC, err := rf.AccumDfrCoherentDirect(ref, p.states, p.grid, p.mat, p.active, co)
		require.NoError(t, err)
		assert.Equal(t, wantC, gotC, "accum_dfr_coherent_direct")

		gotR, err := s.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, p.ropt)
		require.NoError(t, err)
		wantR, err := rf.AccumulateReflections(ref, p.rays, p.rgrid, p.mat, p.bounces, p.ropt)
		require.NoError(t, err)
		assert.Equal(t, wantR, gotR, "accumulate_reflections")

		gotP, err := s.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
		require.NoError(t, err)
		wantP, err := rf.TraceDfrPaths(ref, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
		require.NoError(t, err)
		assert.Equal(t, wantP, gotP, "trace_dfr_paths")
	}
}

func TestRFOnCPUBackendRejectsLikeTheReference(t *testing.T) {
	s := cpuScene(t, unitTriangle())
	ctx := context.Background()
	p := randomRFProblem(testscene.Rand(t), false)
	opt := p.opt
	opt.LaneOffset = opt.DirectSamples + opt.KellerSamples + opt.SuffixSamples + 1
	_, err := s.AccumDfrDirect(ctx, p.states, p.grid, nil, nil, opt)
	assert.ErrorIs(t, err, rf.ErrLaneWindow)
	_, err = s.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, 1, p.ropt) // material of another scene
	assert.ErrorIs(t, err, rf.ErrLength)
	require.NoError(t, s.Close())
	_, err = s.AccumDfrDirect(ctx, p.states, p.grid, nil, nil, p.opt)
	assert.ErrorIs(t, err, rayd.ErrClosed)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = cpuScene(t, unitTriangle()).TraceDfrPaths(cctx, p.tx, p.rx, p.states, nil, p.pactive, p.popt)
	assert.ErrorIs(t, err, context.Canceled)
}

// The accumulation fixture of the multi-device benchmark on the CPU backend.
func ExampleScene_AccumDfrDirect() {
	ctx := context.Background()
	tri := rayd.Mesh{Vertices: []float32{-1, -1, 0, 1, -1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2}}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	states := &rf.DfrStates{
		EdgeIndex: []int32{0, 1}, EdgePos: []float32{0, 0, 0, 0.25, 0, 0}, EdgeDir: []float32{1, 0, 0, 1, 0, 0},
		EdgeTMin: []float32{-1, -1}, EdgeTMax: []float32{1, 1},
		N0: []float32{0, 0, 1, 0, 0, 1}, N1: []float32{0, 0, -1, 0, 0, -1},
		Prim0: []int32{0, 0}, Prim1: []int32{0, 0}, ExteriorAngle: []float32{math.Pi, math.Pi},
		Src: []float32{0, -1, 0.25, 0, -1, 0.25}, SrcPower: []float32{1, 1},
	}
	grid := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 4}
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples, opt.Seed = 8192, 17
	// Two windows of the lane space, as two devices would run them.
	opt.LaneOffset, opt.LaneCount = 0, 4096
	r, err := s.AccumDfrDirect(ctx, states, grid, nil, nil, opt)
	if err != nil {
		panic(err)
	}
	opt.LaneOffset, opt.LaneCount = 4096, -1
	rest, err := s.AccumDfrDirect(ctx, states, grid, nil, nil, opt)
	if err != nil {
		panic(err)
	}
	if err := r.Add(rest); err != nil {
		panic(err)
	}
	fmt.Println(r.DirectCount, r.VisRejects, r.UtdRejects, r.EdgeUses)
	fmt.Printf("%.4g\n", r.Power[5])
	// Output:
	// 8192 0 0 8192
	// 0.000866
}

func ExampleScene_TraceDfrPaths() {
	ctx := context.Background()
	ground := rayd.Mesh{Vertices: []float32{-5, -5, 0, 5, -5, 0, 5, 5, 0}, Faces: []int32{0, 1, 2}}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{ground}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	// A half-plane edge along x at height 1, its faces facing ±z.
	states := &rf.DfrStates{
		EdgeIndex: []int32{7}, EdgePos: []float32{0, 0, 1}, EdgeDir: []float32{1, 0, 0},
		EdgeTMin: []float32{-2}, EdgeTMax: []float32{2}, N0: []float32{0, 0, 1}, N1: []float32{0, 0, -1},
		Prim0: []int32{-1}, Prim1: []int32{-1}, ExteriorAngle: []float32{2 * math.Pi},
		Src: []float32{0, -2, 2}, SrcPower: []float32{1},
	}
	opt := rf.DefaultPathOptions()
	opt.Layout = rf.SourceLane
	paths, err := s.TraceDfrPaths(ctx, []float32{0, -2, 2}, []float32{0, 2, 0.5, 3, 2, 0.5}, states, nil, []bool{true}, opt)
	if err != nil {
		panic(err)
	}
	fmt.Println(paths.Count, paths.Valid, paths.RxID, paths.Edge0)
	// Output: 2 [true true] [0 1] [7 7]
}
