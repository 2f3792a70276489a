package rayd_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

func rfOrdinals(n int) []int {
	d := make([]int, n)
	for i := range d {
		d[i] = i
	}
	return d
}

// rfSimScene is a replicated scene of meshes on n simulated devices.
func rfSimScene(t *testing.T, n int, meshes []rayd.Mesh, o rayd.MultiDeviceOptions) *rayd.Scene {
	t.Helper()
	s, err := rayd.NewScene(context.Background(), meshes, rayd.WithDevices(rfOrdinals(n)...),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: n})), rayd.WithMultiDevice(o))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	requireRFRouted(t, s)
	return s
}

// requireRFRouted checks that a replicated scene refuses RF inputs with the
// contract's validation error (spec §13 row 69), never an unavailable
// backend.
func requireRFRouted(t *testing.T, s *rayd.Scene) {
	t.Helper()
	_, err := s.AccumDfrDirect(context.Background(), nil, rf.DfrGrid{}, nil, nil, rf.AccumOptions{})
	require.NotErrorIs(t, err, rayd.ErrBackendUnavailable)
	require.ErrorContains(t, err, "requires RayD-style DfrStates")
}

// rfMultiProblem is randomRFProblem with a SourceLane path export.
func rfMultiProblem(t *testing.T, i int) rfProblem {
	p := randomRFProblem(testscene.Rand(t), i%3 == 2)
	p.popt.Layout = rf.SourceLane
	return p
}

func rfCoherentCounts(r *rf.CoherentResult) [][]int32 {
	return [][]int32{r.DirectCount, r.MultiCount, r.VisibilityRejectCount, r.UtdRejectCount}
}

// The four RF operations of a replicated scene on 2, 4 and 8 simulated
// devices against the CPU scene: counters and path rows exactly, grids to
// float64 summation order; the dispatch is recorded on the scene.
func TestRFMultiSimulatedMatchesTheCPUScene(t *testing.T) {
	ctx := context.Background()
	for i := range 3 {
		p := rfMultiProblem(t, i)
		cpu := cpuScene(t, p.meshes...)
		wantD, err := cpu.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
		require.NoError(t, err)
		co := rf.DefaultCoherentOptions()
		co.Wavelength = p.opt.Wavelength
		wantC, err := cpu.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
		require.NoError(t, err)
		wantR, err := cpu.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, p.ropt)
		require.NoError(t, err)
		wedges := p.ropt
		wedges.CollectWedges, wedges.WedgeCapacity = true, 4096
		wantW, err := cpu.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, wedges)
		require.NoError(t, err)
		wantP, err := cpu.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
		require.NoError(t, err)
		for _, n := range []int{2, 4, 8} {
			name := fmt.Sprintf("problem%d/%d devices", i, n)
			s := rfSimScene(t, n, p.meshes, rayd.MultiDeviceOptions{MinLanesPerDevice: 1, MinRaysPerDevice: 1})

			gotD, err := s.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
			require.NoError(t, err, name)
			assert.Equal(t, accumCounters(wantD), accumCounters(gotD), "%s: direct counters", name)
			assert.LessOrEqual(t, relL2(accumGrids(wantD), accumGrids(gotD)), 1e-12, "%s: direct grids", name)
			if total := p.opt.DirectSamples + p.opt.KellerSamples + p.opt.SuffixSamples; total >= 32*n {
				assert.Equal(t, shard.ModeLaneSharded, s.LastDispatch().Mode, name)
			}

			gotC, err := s.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
			require.NoError(t, err, name)
			assert.Equal(t, rfCoherentCounts(wantC), rfCoherentCounts(gotC), "%s: coherent counts", name)
			assert.LessOrEqual(t, relL2(coherentGrids(wantC), coherentGrids(gotC)), 1e-12, "%s: coherent grids", name)

			gotR, err := s.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, p.ropt)
			require.NoError(t, err, name)
			assert.Equal(t, wantR.ReflectionCount, gotR.ReflectionCount, "%s: reflection_count", name)
			assert.Equal(t, wantR.RayCount, gotR.RayCount, name)
			assert.LessOrEqual(t, relL2(reflGrids(wantR), reflGrids(gotR)), 1e-12, "%s: reflection grids", name)
			assert.Equal(t, reflMode(p, n), s.LastDispatch().Mode, name)

			gotW, err := s.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, wedges)
			require.NoError(t, err, name)
			assert.Equal(t, wantW, gotW, "%s: wedge collection is the single run", name)
			assert.Equal(t, shard.ModeMaster, s.LastDispatch().Mode, name)

			gotP, err := s.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
			require.NoError(t, err, name)
			assert.Equal(t, wantP, gotP, "%s: SourceLane rows", name)
			assert.Equal(t, shard.ClassSourceLane, s.LastDispatch().Class, name)
		}
	}
}

// reflMode is the dispatch of the fixture's reflection batch on n devices
// with MinLanesPerDevice 1: batch-sharded when every remote window reaches
// 1 + ceil(Gr/100) rows, Gr = cells·28 + 8.
func reflMode(p rfProblem, n int) shard.Mode {
	floor := 1 + (p.rgrid.Res0*p.rgrid.Res1*28+8+99)/100
	remotes := 0
	for _, w := range shard.LaneShards(rfOrdinals(n), nil, 0, len(p.rays.O)/3) {
		if w.Device != 0 {
			if w.Len() < floor {
				return shard.ModeMaster
			}
			remotes++
		}
	}
	if remotes == 0 {
		return shard.ModeMaster
	}
	return shard.ModeBatchSharded
}

// A replicated scene rejects invalid RF inputs with the CPU scene's errors,
// and refuses what the layer has no semantics for with typed errors.
func TestRFMultiSimulatedRefusals(t *testing.T) {
	ctx := context.Background()
	p := rfMultiProblem(t, 0)
	cpu := cpuScene(t, p.meshes...)
	s := rfSimScene(t, 2, p.meshes, rayd.MultiDeviceOptions{MinLanesPerDevice: 1, MinRaysPerDevice: 1})
	chunked := rfSimScene(t, 2, p.meshes, rayd.MultiDeviceOptions{ChunkRays: 64})

	same := func(name string, run func(*rayd.Scene) error) {
		t.Helper()
		want, got := run(cpu), run(s)
		require.Error(t, want, name)
		require.Error(t, got, name)
		assert.Equal(t, want.Error(), got.Error(), name)
		var ve *rf.ValidationError
		assert.ErrorAs(t, got, &ve, name)
	}
	direct := func(mut func(*rf.AccumOptions, *rf.DfrGrid)) func(*rayd.Scene) error {
		return func(sc *rayd.Scene) error {
			o, g := p.opt, p.grid
			mut(&o, &g)
			_, err := sc.AccumDfrDirect(ctx, p.states, g, p.mat, p.active, o)
			return err
		}
	}
	same("window", direct(func(o *rf.AccumOptions, _ *rf.DfrGrid) { o.LaneOffset = -1 }))
	same("window past the lanes", direct(func(o *rf.AccumOptions, _ *rf.DfrGrid) { o.LaneOffset, o.LaneCount = 1, 1<<30 }))
	same("wavelength", direct(func(o *rf.AccumOptions, _ *rf.DfrGrid) { o.Wavelength = 0 }))
	same("grid", direct(func(_ *rf.AccumOptions, g *rf.DfrGrid) { g.Res0 = 0 }))
	same("coherent active", func(sc *rayd.Scene) error {
		_, err := sc.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, []bool{true, false, true, true, true, true, true, true, true}, rf.DefaultCoherentOptions())
		return err
	})
	same("reflection bounces", func(sc *rayd.Scene) error {
		_, err := sc.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, -1, p.ropt)
		return err
	})
	same("path active", func(sc *rayd.Scene) error {
		_, err := sc.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, append(p.pactive, true), p.popt)
		return err
	})

	// §13 row 69: the layer's own check of states and grid.
	_, err := s.AccumDfrDirect(ctx, nil, p.grid, p.mat, p.active, p.opt)
	require.ErrorIs(t, err, rf.ErrInvalidArgument)
	require.ErrorContains(t, err, "requires RayD-style DfrStates")
	// Row 52: Compact rows have no global position.
	compact := p.popt
	compact.Layout = rf.Compact
	_, err = s.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, compact)
	require.ErrorIs(t, err, rf.ErrInvalidArgument)
	require.ErrorContains(t, err, "requires DfrPathLayout.SourceLane")
	// Rows 57 and 47: chunking refusals.
	_, err = chunked.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
	require.ErrorIs(t, err, shard.ErrUnsupported)
	wedges := p.ropt
	wedges.CollectWedges = true
	_, err = chunked.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, wedges)
	require.ErrorIs(t, err, shard.ErrUnsupported)
	require.ErrorContains(t, err, "global capacity")
	// The chunked scene still accumulates.
	_, err = chunked.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
	require.NoError(t, err)
	assert.Equal(t, shard.ModeLaneChunked, chunked.LastDispatch().Mode)
	// A CPU scene's RF path is untouched.
	assert.Nil(t, cpu.LastDispatch())
}

// gpuReplicated is a replicated scene on devices 0 and 1, or on two
// replicas of device 0 on a machine with one GPU.
func gpuReplicated(t *testing.T, meshes []rayd.Mesh, o rayd.MultiDeviceOptions) *rayd.Scene {
	t.Helper()
	devs, same := gputest.ReplicaDevices(t)
	o.AllowSameDevice = same
	s, err := rayd.NewScene(context.Background(), meshes, rayd.WithDevices(devs...), rayd.WithMultiDevice(o))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	requireRFRouted(t, s)
	return s
}

// requireSamePaths compares two path exports row for row, bit for bit.
func requireSamePaths(t *testing.T, want, got *rf.DfrPaths, name string) {
	t.Helper()
	require.Equal(t, [3]int{want.Capacity, int(want.Count), int(want.Layout)}, [3]int{got.Capacity, int(got.Count), int(got.Layout)}, name)
	require.Equal(t, want.Valid, got.Valid, "%s: valid", name)
	for k, pair := range [][2][]int32{{want.TxID, got.TxID}, {want.RxID, got.RxID}, {want.Order, got.Order},
		{want.Edge0, got.Edge0}, {want.Edge1, got.Edge1}, {want.Edge2, got.Edge2}} {
		require.Equal(t, pair[0], pair[1], "%s: id column %d", name, k)
	}
	for k, pair := range [][2][]float64{{want.Delay, got.Delay}, {want.FieldXRe, got.FieldXRe}, {want.FieldXIm, got.FieldXIm},
		{want.FieldYRe, got.FieldYRe}, {want.FieldYIm, got.FieldYIm}, {want.FieldZRe, got.FieldZRe}, {want.FieldZIm, got.FieldZIm},
		{want.P0, got.P0}, {want.P1, got.P1}, {want.P2, got.P2}} {
		for i := range pair[0] {
			if math.Float64bits(pair[0][i]) != math.Float64bits(pair[1][i]) {
				require.Failf(t, "rows differ", "%s: float column %d row %d: %v != %v", name, k, i, pair[0][i], pair[1][i])
			}
		}
	}
}

// The four RF operations on a replicated scene of two GPUs against the
// single-device scene, sharded (equal and skewed weights), chunked (lanes
// folded on each device) and master-only: counters exactly, grids within
// 1e-5 relative L2, SourceLane rows identical.
func TestRFMultiGPUMatchesSingleDevice(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	ctx := context.Background()
	for i := range 6 {
		p := rfMultiProblem(t, i)
		p.opt.DirectSamples, p.opt.KellerSamples, p.opt.SuffixSamples = 20000+i*7919, 5000, 5000
		single := gpuScene(t, 0, p.meshes)
		wantD, err := single.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
		require.NoError(t, err)
		co := rf.DefaultCoherentOptions()
		co.Wavelength = p.opt.Wavelength
		wantC, err := single.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
		require.NoError(t, err)
		wantR, err := single.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, p.ropt)
		require.NoError(t, err)
		wedges := p.ropt
		wedges.CollectWedges, wedges.WedgeCapacity = true, 4096
		wantW, err := single.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, wedges)
		require.NoError(t, err)
		wantP, err := single.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
		require.NoError(t, err)

		for _, cfg := range []struct {
			name string
			o    rayd.MultiDeviceOptions
			mode shard.Mode
		}{
			{"equal", rayd.MultiDeviceOptions{MinLanesPerDevice: 1, MinRaysPerDevice: 1}, shard.ModeLaneSharded},
			{"skewed", rayd.MultiDeviceOptions{MinLanesPerDevice: 1, MinRaysPerDevice: 1, Weights: []float64{3, 1}}, shard.ModeLaneSharded},
			{"chunked", rayd.MultiDeviceOptions{MinLanesPerDevice: 1, ChunkRays: 1000}, shard.ModeLaneChunked},
			{"master-only", rayd.MultiDeviceOptions{MinLanesPerDevice: 1, MinRaysPerDevice: 1, Weights: []float64{1, 0}}, shard.ModeMaster},
		} {
			name := fmt.Sprintf("problem%d/%s", i, cfg.name)
			s := gpuReplicated(t, p.meshes, cfg.o)

			gotD, err := s.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
			require.NoError(t, err, name)
			assert.Equal(t, cfg.mode, s.LastDispatch().Mode, name)
			assert.Equal(t, accumCounters(wantD), accumCounters(gotD), "%s: direct counters", name)
			assert.LessOrEqual(t, relL2(accumGrids(wantD), accumGrids(gotD)), 1e-5, "%s: direct grids", name)

			gotC, err := s.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
			require.NoError(t, err, name)
			assert.Equal(t, rfCoherentCounts(wantC), rfCoherentCounts(gotC), "%s: coherent counts", name)
			assert.LessOrEqual(t, relL2(coherentGrids(wantC), coherentGrids(gotC)), 1e-5, "%s: coherent grids", name)

			gotR, err := s.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, p.ropt)
			require.NoError(t, err, name)
			assert.Equal(t, wantR.ReflectionCount, gotR.ReflectionCount, "%s: reflection_count", name)
			assert.Equal(t, wantR.RayCount, gotR.RayCount, name)
			assert.LessOrEqual(t, relL2(reflGrids(wantR), reflGrids(gotR)), 1e-5, "%s: reflection grids", name)

			if cfg.name == "chunked" {
				_, err := s.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
				require.ErrorIs(t, err, shard.ErrUnsupported, name)
				continue
			}
			gotW, err := s.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, wedges)
			require.NoError(t, err, name)
			assert.Equal(t, shard.ModeMaster, s.LastDispatch().Mode, name)
			assert.Equal(t, wantW.ReflectionCount, gotW.ReflectionCount, "%s: wedge run reflection_count", name)
			compareWedges(t, &wantW.Wedges, &gotW.Wedges, name)

			gotP, err := s.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
			require.NoError(t, err, name)
			requireSamePaths(t, wantP, gotP, name)
		}
	}
}

// TestRFMultiGPUTiming logs accum_dfr_direct at 67,108,864 samples on one
// GPU (the single-device scene) and on two (a replicated scene, default
// options: lane-sharded). The times are logged, not asserted; the results
// must agree.
func TestRFMultiGPUTiming(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	ctx := context.Background()
	mesh, st, g := testscene.AccumFixture()
	tri := []rayd.Mesh{mesh}
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples, opt.Seed = 1<<26, 17
	best := func(s *rayd.Scene) (time.Duration, *rf.AccumResult) {
		r, err := s.AccumDfrDirect(ctx, st, g, nil, nil, opt) // warm-up
		require.NoError(t, err)
		var fastest time.Duration
		for range 5 {
			start := time.Now()
			r, err = s.AccumDfrDirect(ctx, st, g, nil, nil, opt)
			d := time.Since(start)
			require.NoError(t, err)
			if fastest == 0 || d < fastest {
				fastest = d
			}
		}
		return fastest, r
	}
	one, want := best(gpuScene(t, 0, tri))
	s := gpuReplicated(t, tri, rayd.MultiDeviceOptions{})
	two, got := best(s)
	d := s.LastDispatch()
	require.Equal(t, shard.ModeLaneSharded, d.Mode)
	assert.Equal(t, accumCounters(want), accumCounters(got))
	assert.LessOrEqual(t, relL2(accumGrids(want), accumGrids(got)), 1e-5)
	t.Logf("accum_dfr_direct, %d samples: 1 GPU %v, replicated on devices %v %v (%s, windows %v), ratio %.2fx",
		opt.DirectSamples, one, s.Devices(), two, d.Mode, d.Shards, float64(one)/float64(two))
}
