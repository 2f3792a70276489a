package shard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

func rfDevices(n int) []int {
	d := make([]int, n)
	for i := range d {
		d[i] = i
	}
	return d
}

// rfWeightings are the splits every RF test runs: equal, skewed towards the
// master, master-only and last-device-only.
func rfWeightings(n int) map[string][]float64 {
	skew, master, last := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range skew {
		skew[i] = float64(n - i)
	}
	master[0], last[n-1] = 1, 1
	return map[string][]float64{"equal": nil, "skewed": skew, "master-only": master, "last-only": last}
}

// requirePartition checks that shards are contiguous, cover [begin, end)
// and that every interior boundary is a whole warp from begin.
func requirePartition(t *testing.T, shards []shard.Shard, begin, end int, warp bool) {
	t.Helper()
	next := begin
	for i, s := range shards {
		require.Equal(t, next, s.Start, "shard %d", i)
		require.Greater(t, s.Stop, s.Start, "shard %d is empty", i)
		if warp && i < len(shards)-1 {
			require.Zero(t, (s.Stop-begin)%shard.WarpLanes, "interior boundary %d is not warp-aligned", s.Stop)
		}
		next = s.Stop
	}
	require.Equal(t, end, next)
}

// test_two_device_accum_matches_single_device_at_several_weightings,
// test_coherent_lane_shards_match_single_device and the GPU reflection
// grid test of test_multi_device_reflection_accum, on 2, 4 and 8 simulated
// devices: counters exactly, grids to summation order, every lane once.
func TestRFGridReduceMatchesOneCPURun(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 1200, 5)
	wantD, wantC, wantR := f.wantDirect(t, f.opt), f.wantCoherent(t, f.copt), f.wantReflections(t, f.ropt)
	lanesC := f.states.StateCount() * f.grid.Cells()
	for _, n := range []int{2, 4, 8} {
		devices := rfDevices(n)
		for name, w := range rfWeightings(n) {
			t.Run(fmt.Sprintf("%d/%s", n, name), func(t *testing.T) {
				l, c := rfLayer(t, f, n, devices, shard.Options{Weights: w, MinLanesPerDevice: 1})
				check := func(total int, mode shard.Mode, warp bool) {
					t.Helper()
					d := l.LastDispatch()
					requirePartition(t, d.Shards, 0, total, warp)
					lanes, launches := rfLaunched(c, devices)
					require.Equal(t, total, lanes, "every lane (row) runs exactly once")
					if name == "master-only" {
						require.Equal(t, shard.ModeMaster, d.Mode)
						require.Equal(t, 1, launches)
						for _, dev := range devices[1:] {
							require.Zero(t, c.Stats(dev).Replicates+c.Stats(dev).Launches, "cuda:%d was used", dev)
						}
					} else {
						require.Equal(t, mode, d.Mode)
					}
					c.ResetStats()
				}

				got, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
				require.NoError(t, err)
				requireAccumEqual(t, wantD, got, "accum_dfr_direct")
				require.Equal(t, "grid_reduce", l.LastDispatch().Class)
				check(f.opt.DirectSamples+f.opt.KellerSamples+f.opt.SuffixSamples, shard.ModeLaneSharded, true)

				gotC, err := shard.RunAccumDfrCoherentDirect(ctx, l, f.coherent())
				require.NoError(t, err)
				requireCoherentEqual(t, wantC, gotC, "accum_dfr_coherent_direct")
				check(lanesC, shard.ModeLaneSharded, true)

				gotR, err := shard.RunAccumulateReflections(ctx, l, f.reflections())
				require.NoError(t, err)
				requireReflEqual(t, wantR, gotR, "accumulate_reflections")
				check(len(f.rays.O)/3, shard.ModeBatchSharded, true)
			})
		}
	}
}

// test_source_lane_paths_match_single_device_row_for_row on 2, 4 and 8
// simulated devices: every row, the count and the capacity are those of one
// CPU run.
func TestRFSourceLanePathsMatchOneCPURow(t *testing.T) {
	ctx := context.Background()
	r := testscene.Rand(t)
	f := newRFFixture(t, r, 64, 64, 7)
	for range 20 {
		if f.wantPaths(t).Count > 0 {
			break
		}
		f = newRFFixture(t, r, 64, 64, 7)
	}
	want := f.wantPaths(t)
	require.Positive(t, want.Count, "the fixture exports no path")
	for _, n := range []int{2, 4, 8} {
		for name, w := range rfWeightings(n) {
			t.Run(fmt.Sprintf("%d/%s", n, name), func(t *testing.T) {
				l, c := rfLayer(t, f, n, rfDevices(n), shard.Options{Weights: w, MinRaysPerDevice: 1})
				got, err := shard.RunTraceDfrPaths(ctx, l, f.paths())
				require.NoError(t, err)
				require.Equal(t, want, got)
				d := l.LastDispatch()
				require.Equal(t, shard.ClassSourceLane, d.Class)
				requirePartition(t, d.Shards, 0, len(f.tx)/3, false)
				if name == "master-only" {
					require.Equal(t, shard.ModeMaster, d.Mode)
				} else {
					require.Equal(t, shard.ModeSharded, d.Mode)
					require.Equal(t, shard.RowShards(rfDevices(n), w, len(f.tx)/3), d.Shards)
				}
				lanes, _ := rfLaunched(c, rfDevices(n))
				require.Equal(t, len(f.tx)/3, lanes, "every transmitter runs exactly once")
			})
		}
	}
}

// The row law of a SourceLane export and the transmitter offset of its
// blocks: row ((tx·R + rx)·M + s) of a valid lane names tx, rx.
func TestRFSourceLaneRowLaw(t *testing.T) {
	f := newRFFixture(t, testscene.Rand(t), 64, 64, 5)
	l, _ := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1, Weights: []float64{2, 3}})
	got, err := shard.RunTraceDfrPaths(context.Background(), l, f.paths())
	require.NoError(t, err)
	R, M := len(f.rx)/3, len(f.pactive)
	require.Equal(t, len(f.tx)/3*R*M, got.Capacity)
	require.Equal(t, rf.SourceLane, got.Layout)
	valid := int32(0)
	for g := range got.Capacity {
		if !got.Valid[g] {
			require.Equal(t, int32(-1), got.TxID[g])
			continue
		}
		valid++
		require.Equal(t, int32(g/M/R), got.TxID[g], "row %d", g)
		require.Equal(t, int32(g/M%R), got.RxID[g], "row %d", g)
	}
	require.Equal(t, got.Count, valid)
	require.Equal(t, []shard.Shard{{Device: 0, Start: 0, Stop: 2}, {Device: 1, Replica: 1, Start: 2, Stop: 5}}, l.LastDispatch().Shards)
}

// test_small_grid_reduce_window_runs_on_the_master, the reflection floor
// (min lanes + ceil(Gr/100) rows) and the path floor (remote tx rows · R·M
// path rows): at the floor the call shards, one below it the master runs
// the whole call in one launch.
func TestRFFloorsAreJudgedOnTheActualRemoteWindow(t *testing.T) {
	f := newRFFixture(t, testscene.Rand(t), 3000, 1200, 5)
	devices := []int{0, 1}
	lanes := f.opt.DirectSamples + f.opt.KellerSamples + f.opt.SuffixSamples
	remote := shard.LaneShards(devices, nil, 0, lanes)[1].Len()
	rows := len(f.rays.O) / 3
	gr := f.rgrid.Res0*f.rgrid.Res1*28 + 8
	remoteRows := shard.LaneShards(devices, nil, 0, rows)[1].Len()
	reflFloor := remoteRows - (gr+99)/100
	txRemote := shard.RowShards(devices, nil, len(f.tx)/3)[1].Len()
	pathFloor := txRemote * len(f.rx) / 3 * len(f.pactive)
	for _, tc := range []struct {
		name        string
		o           shard.Options
		run         func(*shard.Layer) error
		want        shard.Mode
		wantFloor   int
		wantLaunchs int
	}{
		{"direct at the floor", shard.Options{MinLanesPerDevice: remote}, runDirect(f), shard.ModeLaneSharded, remote, 2},
		{"direct below it", shard.Options{MinLanesPerDevice: remote + 1}, runDirect(f), shard.ModeMaster, remote + 1, 1},
		{"direct by default", shard.Options{}, runDirect(f), shard.ModeMaster, shard.DefaultMinLanesPerDevice, 1},
		{"reflections at the floor", shard.Options{MinLanesPerDevice: reflFloor}, runRefl(f), shard.ModeBatchSharded, remoteRows, 2},
		{"reflections below it", shard.Options{MinLanesPerDevice: reflFloor + 1}, runRefl(f), shard.ModeMaster, remoteRows + 1, 1},
		{"paths at the floor", shard.Options{MinRaysPerDevice: pathFloor}, runPaths(f), shard.ModeSharded, pathFloor, 2},
		{"paths below it", shard.Options{MinRaysPerDevice: pathFloor + 1}, runPaths(f), shard.ModeMaster, pathFloor + 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, c := rfLayer(t, f, 2, devices, tc.o)
			require.NoError(t, tc.run(l))
			d := l.LastDispatch()
			require.Equal(t, tc.want, d.Mode)
			require.Equal(t, tc.wantFloor, d.Floor)
			_, launches := rfLaunched(c, devices)
			require.Equal(t, tc.wantLaunchs, launches)
			if tc.want == shard.ModeMaster {
				require.Zero(t, c.Stats(1).Launches+c.Stats(1).Replicates+c.Stats(1).Scatters, "the remote was used")
			}
		})
	}
}

func runDirect(f *rfFixture) func(*shard.Layer) error {
	return func(l *shard.Layer) error {
		_, err := shard.RunAccumDfrDirect(context.Background(), l, f.direct())
		return err
	}
}

func runRefl(f *rfFixture) func(*shard.Layer) error {
	return func(l *shard.Layer) error {
		_, err := shard.RunAccumulateReflections(context.Background(), l, f.reflections())
		return err
	}
}

func runPaths(f *rfFixture) func(*shard.Layer) error {
	return func(l *shard.Layer) error {
		_, err := shard.RunTraceDfrPaths(context.Background(), l, f.paths())
		return err
	}
}

// test_chunked_two_device_accum_matches_and_reproduces,
// test_a_chunk_size_is_rounded_up_to_a_whole_warp and the batch-chunked
// reflection plan (no warp rounding), on two devices and on a one-device
// chunked layer.
func TestRFChunkedAccumulation(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 1200, 5)
	wantD, wantC, wantR := f.wantDirect(t, f.opt), f.wantCoherent(t, f.copt), f.wantReflections(t, f.ropt)
	lanes, rows := f.opt.DirectSamples+f.opt.KellerSamples+f.opt.SuffixSamples, len(f.rays.O)/3
	for _, devices := range [][]int{{0, 1}, {0}} {
		t.Run(fmt.Sprint(devices), func(t *testing.T) {
			l, c := rfLayer(t, f, 2, devices, shard.Options{ChunkRays: 100, MinLanesPerDevice: 1})
			chunks := func(size int) int {
				n := 0
				for _, s := range l.LastDispatch().Shards {
					n += (s.Len() + size - 1) / size
				}
				return n
			}
			got, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
			require.NoError(t, err)
			requireAccumEqual(t, wantD, got, "accum_dfr_direct")
			require.Equal(t, shard.ModeLaneChunked, l.LastDispatch().Mode)
			p := l.LastChunkPlan()
			require.Equal(t, [3]int{128, chunks(128), 21}, [3]int{p.ChunkRays, p.ChunkCount, p.RowBytes})
			ran, launches := rfLaunched(c, devices)
			require.Equal(t, p.ChunkCount, launches)
			require.Equal(t, lanes, ran)
			again, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
			require.NoError(t, err)
			require.Equal(t, got, again, "a fixed split merges in a fixed order")

			gotC, err := shard.RunAccumDfrCoherentDirect(ctx, l, f.coherent())
			require.NoError(t, err)
			requireCoherentEqual(t, wantC, gotC, "accum_dfr_coherent_direct")
			require.Equal(t, 36, l.LastChunkPlan().RowBytes)

			gotR, err := shard.RunAccumulateReflections(ctx, l, f.reflections())
			require.NoError(t, err)
			requireReflEqual(t, wantR, gotR, "accumulate_reflections")
			require.Equal(t, shard.ModeBatchChunked, l.LastDispatch().Mode)
			p = l.LastChunkPlan()
			require.Equal(t, [2]int{100, chunks(100)}, [2]int{p.ChunkRays, p.ChunkCount})
			require.Equal(t, shard.OpAccumulateReflections, p.Operation)
			require.Equal(t, rows, p.TotalRows)
		})
	}
}

// test_a_caller_lane_window_is_sharded_inside_itself: the layer shards the
// caller's window and the windows of a partition sum to the whole.
func TestRFCallerLaneWindows(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 64, 2)
	l, _ := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, Weights: []float64{3, 1}})
	task := f.direct()
	task.Options.LaneOffset, task.Options.LaneCount = 1000, 1200
	got, err := shard.RunAccumDfrDirect(ctx, l, task)
	require.NoError(t, err)
	requireAccumEqual(t, f.wantDirect(t, task.Options), got, "window")
	requirePartition(t, l.LastDispatch().Shards, 1000, 2200, true)

	rest := f.direct()
	rest.Options.LaneOffset, rest.Options.LaneCount = 2200, -1
	tail, err := shard.RunAccumDfrDirect(ctx, l, rest)
	require.NoError(t, err)
	head := f.direct()
	head.Options.LaneCount = 1000
	first, err := shard.RunAccumDfrDirect(ctx, l, head)
	require.NoError(t, err)
	require.NoError(t, shard.MergeAccum(first, got))
	require.NoError(t, shard.MergeAccum(first, tail))
	requireAccumEqual(t, f.wantDirect(t, f.opt), first, "partition")

	co := f.coherent()
	co.Options.LaneOffset = 7
	gotC, err := shard.RunAccumDfrCoherentDirect(ctx, l, co)
	require.NoError(t, err)
	requireCoherentEqual(t, f.wantCoherent(t, co.Options), gotC, "coherent window")
}

// Wedge collection is one launch on the master over the whole batch, the
// remote untouched, and its event buffer is the single run's.
func TestRFWedgeCollectionRunsOnTheMaster(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 64, 1200, 2)
	o := f.ropt
	o.CollectWedges, o.CollectWedgePrefixes, o.WedgeCapacity = true, true, 4096
	want := f.wantReflections(t, o)
	l, c := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1})
	task := f.reflections()
	task.Options = o
	got, err := shard.RunAccumulateReflections(ctx, l, task)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	require.Nil(t, l.LastChunkPlan())
	require.Equal(t, 1, c.Stats(0).Launches)
	require.Equal(t, len(f.rays.O)/3, c.Stats(0).RowsLaunched)
	require.Zero(t, c.Stats(1).Launches+c.Stats(1).Replicates)
}

// The pinned strategy: the automatic choice of the unsplit batch.
func TestRFReflectionStrategyIsPinnedFromTheWholeBatch(t *testing.T) {
	d := rf.DefaultReflOptions()
	require.Equal(t, 1, shard.PinReflectionStrategy(64, 0, 16, d))
	require.Equal(t, 2, shard.PinReflectionStrategy(2048, 0, 16, d))
	require.Equal(t, 1, shard.PinReflectionStrategy(2048, 0, 1000, d), "fewer than 4 samples per cell")
	require.Equal(t, 2, shard.PinReflectionStrategy(1024, 1, 16, d), "rows·(B+1) samples")
	require.Equal(t, 1, shard.PinReflectionStrategy(1<<31-1, 3, 16, d), "samples beyond int32")
	d.AccumulationStrategy = 3
	require.Equal(t, 3, shard.PinReflectionStrategy(2048, 0, 16, d))
	d.AccumulationStrategy, d.CompactMinSamples, d.StagedMinSamplesPerCell = 0, 10000, 1
	require.Equal(t, 1, shard.PinReflectionStrategy(2048, 0, 16, d))

	// The sharded plan charges the staged route of the whole batch.
	f := newRFFixture(t, testscene.Rand(t), 64, 1200, 2)
	l, _ := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, ChunkRays: 1 << 20})
	_, err := shard.RunAccumulateReflections(context.Background(), l, f.reflections())
	require.NoError(t, err)
	require.Equal(t, 101+36*(f.bounces+1), l.LastChunkPlan().RowBytes)
}

// The byte model of a budget: three grid payloads plus, when remotes take
// windows, the replicated inputs (DFR); the larger of the master's merge
// peak and one remote's partial pair plus its material (reflections).
func TestRFBudgetChargesGridsAndReplicatedInputs(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 1200, 2)
	cells := int64(f.grid.Cells())
	g := cells*7*4 + 7*4
	in := f.direct().InputBytes()
	for _, tc := range []struct {
		w     []float64
		fixed int64
	}{{nil, 3*g + in}, {[]float64{1, 0}, 3 * g}} {
		l, _ := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, MemoryBudgetBytes: 1 << 30, Weights: tc.w})
		_, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
		require.NoError(t, err)
		require.Equal(t, tc.fixed, l.LastChunkPlan().FixedOutputBytes, "weights %v", tc.w)
		require.Equal(t, shard.SourceBudget, l.LastChunkPlan().Source)
	}
	gr := cells*28 + 8
	l, _ := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, MemoryBudgetBytes: 1 << 30})
	_, err := shard.RunAccumulateReflections(ctx, l, f.reflections())
	require.NoError(t, err)
	require.Equal(t, max(3*gr, 2*gr+17*int64(f.faces)), l.LastChunkPlan().FixedOutputBytes)

	l, c := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, MemoryBudgetBytes: 3 * g})
	_, err = shard.RunAccumDfrDirect(ctx, l, f.direct())
	require.ErrorIs(t, err, shard.ErrBudget)
	_, err = shard.RunAccumulateReflections(ctx, l, f.reflections())
	require.ErrorIs(t, err, shard.ErrBudget)
	_, launches := rfLaunched(c, []int{0, 1})
	require.Zero(t, launches, "a budget refusal happens before any launch")
}

// test_an_empty_lane_space_runs_once_on_the_master and the empty reflection
// batch and path export.
func TestRFEmptyCallsRunOnceOnTheMaster(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 0, 0, 0)
	l, c := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, MinRaysPerDevice: 1})
	got, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
	require.NoError(t, err)
	requireAccumEqual(t, f.wantDirect(t, f.opt), got, "empty")
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	require.Equal(t, 1, l.LastChunkPlan().ChunkCount)

	gotR, err := shard.RunAccumulateReflections(ctx, l, f.reflections())
	require.NoError(t, err)
	requireReflEqual(t, f.wantReflections(t, f.ropt), gotR, "empty batch")
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)

	gotP, err := shard.RunTraceDfrPaths(ctx, l, f.paths())
	require.NoError(t, err)
	require.Equal(t, f.wantPaths(t), gotP)
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	require.Zero(t, c.Stats(1).Launches)

	f = newRFFixture(t, testscene.Rand(t), 0, 0, 3)
	f.rx = nil // no path row per transmitter
	gotP, err = shard.RunTraceDfrPaths(ctx, l, f.paths())
	require.NoError(t, err)
	require.Zero(t, gotP.Capacity)
	require.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
}

// The §13 refusals of the RF operations: each is typed, carries RayD's
// phrase, happens before any launch and leaves the layer usable.
func TestRFRefusalsAreTypedAndLaunchNothing(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 256, 256, 3)
	plain, c := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, MinRaysPerDevice: 1})
	chunked, cc := rfLayer(t, f, 2, []int{0, 1}, shard.Options{ChunkRays: 64})
	offload, co := rfLayer(t, f, 2, []int{0, 1}, shard.Options{Offload: func(int, any) error { return nil }})
	wedges := f.reflections()
	wedges.Options.CollectWedges, wedges.Options.WedgeCapacity = true, 16
	bad := func(mut func(*rfFixture)) *rfFixture {
		g := *f
		st := *f.states
		g.states = &st
		mut(&g)
		return &g
	}
	for _, tc := range []struct {
		name   string
		l      *shard.Layer
		run    func(*shard.Layer) error
		kind   error
		phrase string
	}{
		{"47 wedges with chunking", chunked, func(l *shard.Layer) error {
			_, err := shard.RunAccumulateReflections(ctx, l, wedges)
			return err
		}, shard.ErrUnsupported, "global capacity"},
		{"47 wedges with offload", offload, func(l *shard.Layer) error {
			_, err := shard.RunAccumulateReflections(ctx, l, wedges)
			return err
		}, shard.ErrUnsupported, "global capacity"},
		{"48 reflections with offload", offload, runRefl(f), shard.ErrUnsupported, "does not support MultiDeviceOptions.offload"},
		{"57 paths with chunking", chunked, runPaths(f), shard.ErrUnsupported, "does not yet support MultiDeviceOptions chunking or offload"},
		{"57 paths with offload", offload, runPaths(f), shard.ErrUnsupported, "chunking or offload"},
		{"52 compact paths", plain, runPaths(bad(func(g *rfFixture) { g.popt.Layout = rf.Compact })),
			rf.ErrInvalidArgument, "requires DfrPathLayout.SourceLane"},
		{"53 negative state limit", plain, runPaths(bad(func(g *rfFixture) { g.states.Count = -1 })),
			rf.ErrStateCount, "state_limit must be non-negative."},
		{"55 active length", plain, runPaths(bad(func(g *rfFixture) { g.pactive = g.pactive[1:] })),
			rf.ErrLength, "active must have shape [state_limit]."},
		{"56 capacity", plain, runPaths(bad(func(g *rfFixture) {
			g.tx, g.rx = make([]float32, 3*(1<<15+1)), make([]float32, 3<<16)
			g.popt.TxPolarization = nil
			g.pactive = g.pactive[:1]
			g.popt.MaxPaths = 1
		})), rf.ErrCapacity, "capacity does not fit in int32."},
		{"46 tx_position rows", plain, runRefl(bad(func(g *rfFixture) { g.rays.TxPosition = g.rays.TxPosition[3:] })),
			rf.ErrLength, "can only shard tx_position when its first dimension is the batch axis"},
		{"46 tx_polarization rows", plain, runRefl(bad(func(g *rfFixture) { g.rays.TxPolarization = g.rays.TxPolarization[:3] })),
			rf.ErrLength, "first dimension is the batch axis"},
		{"46 active rows", plain, runRefl(bad(func(g *rfFixture) { g.rays.Active = g.rays.Active[:1] })),
			rf.ErrLength, "when it is empty or its first dimension is the batch axis"},
		{"69 direct without states", plain, runDirect(bad(func(g *rfFixture) { g.states = nil })),
			rf.ErrInvalidArgument, "requires RayD-style DfrStates"},
		{"69 direct without a grid", plain, runDirect(bad(func(g *rfFixture) { g.grid = rf.DfrGrid{} })),
			rf.ErrInvalidArgument, "requires RayD-style DfrStates"},
		{"69 coherent without states", plain, func(l *shard.Layer) error {
			task := f.coherent()
			task.States = nil
			_, err := shard.RunAccumDfrCoherentDirect(ctx, l, task)
			return err
		}, rf.ErrInvalidArgument, "requires RayD-style DfrStates"},
		{"36 negative lane offset", plain, runDirect(bad(func(g *rfFixture) { g.opt.LaneOffset = -1 })),
			rf.ErrLaneWindow, "lane_offset must be non-negative."},
		{"37 lane offset past the lanes", plain, runDirect(bad(func(g *rfFixture) { g.opt.LaneOffset = 257 })),
			rf.ErrLaneWindow, "lane_offset must not exceed the total sample count."},
		{"38 window past the lanes", plain, runDirect(bad(func(g *rfFixture) { g.opt.LaneOffset, g.opt.LaneCount = 1, 256 })),
			rf.ErrLaneWindow, "lane_offset + lane_count must not exceed the total sample count."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(tc.l)
			require.ErrorIs(t, err, tc.kind)
			require.ErrorContains(t, err, tc.phrase)
			var re *shard.RefusalError
			if tc.kind == shard.ErrUnsupported {
				require.ErrorAs(t, err, &re)
			}
			require.NoError(t, tc.l.Poisoned())
		})
	}
	for _, cl := range []*simdev.Cluster{c, cc, co} {
		_, launches := rfLaunched(cl, []int{0, 1})
		require.Zero(t, launches, "a refusal launched")
	}
	_, err := shard.RunAccumDfrDirect(ctx, plain, f.direct())
	require.NoError(t, err, "the layer stays usable")
}

// Rows 49 and 50: the merge refuses bounded wedge buffers and partials of
// different results.
func TestRFMergesRefuseIncompatiblePartials(t *testing.T) {
	f := newRFFixture(t, testscene.Rand(t), 256, 64, 2)
	a, b := f.wantReflections(t, f.ropt), f.wantReflections(t, f.ropt)
	b.MaxBounces++
	err := shard.MergeReflections(a, b)
	require.ErrorIs(t, err, shard.ErrIncompatiblePartials)
	require.ErrorContains(t, err, "incompatible result metadata")
	b = f.wantReflections(t, f.ropt)
	b.Res0, b.Res1 = b.Res1+1, b.Res0
	require.ErrorContains(t, shard.MergeReflections(a, b), "incompatible result metadata")
	o := f.ropt
	o.CollectWedges, o.WedgeCapacity = true, 8
	w := f.wantReflections(t, o)
	for _, pair := range [][2]*rf.ReflResult{{a, w}, {w, a}} {
		err := shard.MergeReflections(pair[0], pair[1])
		require.ErrorIs(t, err, shard.ErrIncompatiblePartials)
		require.ErrorContains(t, err, "cannot merge bounded wedge-event buffers")
		var me *shard.MergeError
		require.ErrorAs(t, err, &me)
		require.Equal(t, shard.OpAccumulateReflections, me.Operation)
	}
	o.WedgeCapacity = 0
	w = f.wantReflections(t, o)
	c := f.wantReflections(t, o)
	require.NoError(t, shard.MergeReflections(w, c))
	require.Equal(t, 2*c.Wedges.Count, w.Wedges.Count)
	require.Equal(t, 2*c.RayCount, w.RayCount)

	d := f.wantDirect(t, f.opt)
	g := f.grid
	g.Res0++
	e, err := rf.AccumDfrDirect(rfRefScene{f.ref}, f.states, g, f.mat, f.active, f.opt)
	require.NoError(t, err)
	require.ErrorIs(t, shard.MergeAccum(d, e), shard.ErrIncompatiblePartials)
	require.ErrorIs(t, shard.MergeAccum(d, nil), shard.ErrIncompatiblePartials)
	dc := f.wantCoherent(t, f.copt)
	ec, err := rf.AccumDfrCoherentDirect(rfRefScene{f.ref}, f.states, g, f.mat, f.active, f.copt)
	require.NoError(t, err)
	require.ErrorIs(t, shard.MergeCoherent(dc, ec), shard.ErrIncompatiblePartials)
	dc.UtdRejectCount = dc.UtdRejectCount[1:]
	require.ErrorIs(t, shard.MergeCoherent(dc, f.wantCoherent(t, f.copt)), shard.ErrIncompatiblePartials)
}

// An unbuilt or poisoned layer refuses every RF operation; a failed launch
// is a *ReplicaError and leaves the layer usable.
func TestRFLayerStates(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 512, 256, 3)
	runs := map[string]func(*shard.Layer) error{
		"direct": runDirect(f), "reflections": runRefl(f), "paths": runPaths(f),
		"coherent": func(l *shard.Layer) error {
			_, err := shard.RunAccumDfrCoherentDirect(ctx, l, f.coherent())
			return err
		},
	}
	l, c := rfLayer(t, f, 2, []int{0, 1}, shard.Options{MinLanesPerDevice: 1, MinRaysPerDevice: 1})
	for name, run := range runs {
		c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageLaunch, Nth: 1, Async: name == "reflections"})
		err := run(l)
		require.ErrorIs(t, err, shard.ErrReplica, name)
		require.ErrorIs(t, err, simdev.ErrInjected, name)
		require.NoError(t, l.Poisoned(), name)
		c.ClearFaults()
		require.NoError(t, run(l), name)
	}
	c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageApply})
	require.Error(t, l.Broadcast(ctx, shard.SyncGeometry{}))
	for name, run := range runs {
		require.ErrorIs(t, run(l), shard.ErrPoisoned, name)
	}
	require.NoError(t, l.Close())
	for name, run := range runs {
		require.ErrorIs(t, run(l), shard.ErrPoisoned, name)
	}
	l2, _ := rfLayer(t, f, 2, []int{0, 1}, shard.Options{})
	require.NoError(t, l2.Close())
	for name, run := range runs {
		require.ErrorIs(t, run(l2), shard.ErrNotBuilt, name)
	}
}

// Concurrent RF calls on one layer, mixed with per_ray queries: each call
// merges only its own partials.
func TestRFConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 2000, 600, 4)
	wantD, wantR, wantP := f.wantDirect(t, f.opt), f.wantReflections(t, f.ropt), f.wantPaths(t)
	l, _ := rfLayer(t, f, 4, rfDevices(4), shard.Options{MinLanesPerDevice: 1, MinRaysPerDevice: 1})
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 4 {
		wg.Go(func() {
			d, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
			if err == nil && !equalCounters(accumCounters(wantD), accumCounters(d)) {
				err = errors.New("direct counters differ")
			}
			errs <- err
		})
		wg.Go(func() {
			r, err := shard.RunAccumulateReflections(ctx, l, f.reflections())
			if err == nil && (r.ReflectionCount != wantR.ReflectionCount || r.RayCount != wantR.RayCount) {
				err = errors.New("reflection counts differ")
			}
			errs <- err
		})
		wg.Go(func() {
			p, err := shard.RunTraceDfrPaths(ctx, l, f.paths())
			if err == nil && p.Count != wantP.Count {
				err = errors.New("path counts differ")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func equalCounters(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
