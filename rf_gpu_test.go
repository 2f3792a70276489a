package rayd_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/rf"
)

// relL2 is ‖got − want‖₂ / ‖want‖₂ over the concatenated slices (0 when
// both are zero).
func relL2(want, got [][]float64) float64 {
	var num, den float64
	for k := range want {
		for i := range want[k] {
			d := got[k][i] - want[k][i]
			num += d * d
			den += want[k][i] * want[k][i]
		}
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

func accumCounters(r *rf.AccumResult) []int32 {
	return []int32{r.DirectCount, r.KellerCount, r.SuffixCount, r.VisRejects, r.EdgeVisRejects, r.UtdRejects, r.EdgeUses}
}

func accumGrids(r *rf.AccumResult) [][]float64 {
	return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
}

func coherentGrids(r *rf.CoherentResult) [][]float64 {
	return [][]float64{r.DirectFieldXRe, r.DirectFieldXIm, r.DirectFieldYRe, r.DirectFieldYIm, r.DirectFieldZRe,
		r.DirectFieldZIm, r.MultiFieldXRe, r.MultiFieldXIm, r.MultiFieldYRe, r.MultiFieldYIm, r.MultiFieldZRe, r.MultiFieldZIm}
}

func reflGrids(r *rf.ReflResult) [][]float64 {
	return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
}

func gpuScene(t *testing.T, ordinal int, meshes []rayd.Mesh) *rayd.Scene {
	t.Helper()
	s, err := rayd.NewScene(context.Background(), meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(ordinal))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestRFGPUMatchesReference: the four operations on the device against the
// float64 reference on random states, grids (shared-memory and global
// accumulation), materials, rays and scenes.
func TestRFGPUMatchesReference(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	r := testscene.Rand(t)
	ctx := context.Background()
	for i := range 24 {
		p := randomRFProblem(r, i%3 == 2)
		name := fmt.Sprintf("problem%d", i)
		gpu, cpu := gpuScene(t, ords[0], p.meshes), cpuScene(t, p.meshes...)

		want, err := cpu.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
		require.NoError(t, err)
		got, err := gpu.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
		require.NoError(t, err)
		assert.Equal(t, accumCounters(want), accumCounters(got), "%s: direct counters", name)
		assert.LessOrEqual(t, relL2(accumGrids(want)[:1], accumGrids(got)[:1]), 1e-4, "%s: power", name)
		assert.LessOrEqual(t, relL2(accumGrids(want), accumGrids(got)), 1e-4, "%s: direct grids", name)

		for _, co := range []rf.CoherentOptions{rf.DefaultCoherentOptions(), {Wavelength: 0.37, LaneCount: -1}} {
			co.Wavelength = p.opt.Wavelength
			wantC, err := cpu.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
			require.NoError(t, err)
			gotC, err := gpu.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
			require.NoError(t, err)
			assert.Equal(t, wantC.DirectCount, gotC.DirectCount, "%s: coherent direct_count", name)
			assert.Equal(t, wantC.VisibilityRejectCount, gotC.VisibilityRejectCount, "%s: coherent vis", name)
			assert.Equal(t, wantC.UtdRejectCount, gotC.UtdRejectCount, "%s: coherent utd", name)
			assert.Equal(t, wantC.MultiCount, gotC.MultiCount, name)
			// Complex fields: the relative L2 of re and im together bounds
			// both magnitude and phase errors.
			assert.LessOrEqual(t, relL2(coherentGrids(wantC), coherentGrids(gotC)), 1e-4, "%s: coherent fields", name)
		}

		ropt := p.ropt
		ropt.CollectWedges, ropt.CollectWedgePrefixes, ropt.WedgeCapacity = true, i%2 == 0, 4096
		wantR, err := cpu.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, ropt)
		require.NoError(t, err)
		gotR, err := gpu.AccumulateReflections(ctx, p.rays, p.rgrid, p.mat, p.bounces, ropt)
		require.NoError(t, err)
		assert.Equal(t, wantR.ReflectionCount, gotR.ReflectionCount, "%s: reflection_count", name)
		assert.LessOrEqual(t, relL2(reflGrids(wantR), reflGrids(gotR)), 1e-4, "%s: reflection grids", name)
		compareWedges(t, &wantR.Wedges, &gotR.Wedges, name)

		wantP, err := cpu.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
		require.NoError(t, err)
		gotP, err := gpu.TraceDfrPaths(ctx, p.tx, p.rx, p.states, p.mat, p.pactive, p.popt)
		require.NoError(t, err)
		comparePaths(t, wantP, gotP, name)
	}
}

// compareWedges compares event buffers as multisets keyed by (ray, depth).
func compareWedges(t *testing.T, want, got *rf.WedgeEvents, name string) {
	t.Helper()
	require.Equal(t, want.Count, got.Count, "%s: wedge count", name)
	order := func(w *rf.WedgeEvents) []int {
		idx := make([]int, min(int(w.Count), w.Capacity))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool {
			ia, ib := idx[a], idx[b]
			return w.RayIndex[ia] < w.RayIndex[ib] || (w.RayIndex[ia] == w.RayIndex[ib] && w.Depth[ia] < w.Depth[ib])
		})
		return idx
	}
	wi, gi := order(want), order(got)
	for k := range wi {
		a, b := wi[k], gi[k]
		require.Equal(t, []int32{want.RayIndex[a], want.Prim[a], want.Depth[a]}, []int32{got.RayIndex[b], got.Prim[b], got.Depth[b]}, "%s: wedge %d", name, k)
		assert.InDelta(t, want.SourcePower[a], got.SourcePower[b], 1e-5*math.Abs(want.SourcePower[a])+1e-30, "%s: wedge power", name)
		for c := range 3 {
			assert.InDelta(t, want.Hit[3*a+c], got.Hit[3*b+c], 1e-5, "%s: wedge hit", name)
			assert.InDelta(t, want.Source[3*a+c], got.Source[3*b+c], 1e-4, "%s: wedge source", name)
		}
	}
}

// comparePaths: SourceLane rows row by row, Compact rows as multisets keyed
// by (tx, rx, edge0); ids exact, floats to float32 rounding of the fields'
// scale.
func comparePaths(t *testing.T, want, got *rf.DfrPaths, name string) {
	t.Helper()
	require.Equal(t, want.Capacity, got.Capacity, name)
	require.Equal(t, want.Count, got.Count, "%s: path count", name)
	rows := func(p *rf.DfrPaths) []int {
		idx := make([]int, p.Capacity)
		for i := range idx {
			idx[i] = i
		}
		if p.Layout == rf.Compact {
			sort.SliceStable(idx, func(a, b int) bool {
				ka := [3]int32{p.TxID[idx[a]], p.RxID[idx[a]], p.Edge0[idx[a]]}
				kb := [3]int32{p.TxID[idx[b]], p.RxID[idx[b]], p.Edge0[idx[b]]}
				if !p.Valid[idx[a]] || !p.Valid[idx[b]] {
					return p.Valid[idx[a]] && !p.Valid[idx[b]]
				}
				return ka[0] < kb[0] || ka[0] == kb[0] && (ka[1] < kb[1] || ka[1] == kb[1] && ka[2] < kb[2])
			})
		}
		return idx
	}
	wi, gi := rows(want), rows(got)
	for k := range wi {
		a, b := wi[k], gi[k]
		require.Equal(t, want.Valid[a], got.Valid[b], "%s: row %d valid", name, k)
		require.Equal(t, []int32{want.TxID[a], want.RxID[a], want.Order[a], want.Edge0[a], want.Edge1[a], want.Edge2[a]},
			[]int32{got.TxID[b], got.RxID[b], got.Order[b], got.Edge0[b], got.Edge1[b], got.Edge2[b]}, "%s: row %d ids", name, k)
		assert.InDelta(t, want.Delay[a], got.Delay[b], 1e-6*want.Delay[a]+1e-30, "%s: row %d delay", name, k)
		wf := [][]float64{want.FieldXRe, want.FieldXIm, want.FieldYRe, want.FieldYIm, want.FieldZRe, want.FieldZIm}
		gf := [][]float64{got.FieldXRe, got.FieldXIm, got.FieldYRe, got.FieldYIm, got.FieldZRe, got.FieldZIm}
		var scale float64
		for c := range wf {
			scale = math.Max(scale, math.Abs(wf[c][a]))
		}
		for c := range wf {
			assert.InDelta(t, wf[c][a], gf[c][b], 1e-5*scale+1e-30, "%s: row %d field %d", name, k, c)
		}
		for c := range 3 {
			assert.InDelta(t, want.P0[3*a+c], got.P0[3*b+c], 1e-5, "%s: row %d p0", name, k)
		}
	}
}

// partitionsOf cuts [0, total) into 1, 2, 3 and 7 windows, warp-aligned
// (interior cuts multiples of 32) and not, with an empty window too.
func partitionsOf(total int) map[string][]int {
	a := func(f float64) int { return min(total, int(f*float64(total))/32*32) }
	o := func(f float64) int { return min(total, int(f*float64(total))|1) }
	return map[string][]int{
		"1":         {0, total},
		"2-aligned": {0, a(0.5), total},
		"2-odd":     {0, o(0.5), total},
		"3-aligned": {0, a(0.3), a(0.6), total},
		"3-odd":     {0, 1, o(0.7), total},
		"7-aligned": {0, a(0.1), a(0.2), a(0.3), a(0.5), a(0.7), a(0.9), total},
		"7-odd":     {0, o(0.05), o(0.2), o(0.2), o(0.45), o(0.6), o(0.95), total},
	}
}

// TestRFGPUWindowsPartitionTheLaunch: windows launched separately and summed
// reproduce one launch — counters exactly, grids to float32 rounding.
func TestRFGPUWindowsPartitionTheLaunch(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	r := testscene.Rand(t)
	ctx := context.Background()
	for i := range 4 {
		p := randomRFProblem(r, i%2 == 1)
		p.opt.DirectSamples, p.opt.KellerSamples, p.opt.SuffixSamples = 2000+r.IntN(2000), 1000+r.IntN(1000), 1000+r.IntN(1000)
		s := gpuScene(t, ords[0], p.meshes)
		full, err := s.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
		require.NoError(t, err)
		total := p.opt.DirectSamples + p.opt.KellerSamples + p.opt.SuffixSamples
		co := rf.DefaultCoherentOptions()
		co.Wavelength = p.opt.Wavelength
		fullC, err := s.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, co)
		require.NoError(t, err)
		totalC := p.states.StateCount() * p.grid.Cells()
		for name, cuts := range partitionsOf(total) {
			sum := &rf.AccumResult{Res0: p.grid.Res0, Res1: p.grid.Res1}
			for _, g := range []*[]float64{&sum.Power, &sum.FieldXRe, &sum.FieldXIm, &sum.FieldYRe, &sum.FieldYIm, &sum.FieldZRe, &sum.FieldZIm} {
				*g = make([]float64, p.grid.Cells())
			}
			for w := 0; w+1 < len(cuts); w++ {
				o := p.opt
				o.LaneOffset, o.LaneCount = cuts[w], cuts[w+1]-cuts[w]
				part, err := s.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, o)
				require.NoError(t, err)
				require.NoError(t, sum.Add(part))
			}
			assert.Equal(t, accumCounters(full), accumCounters(sum), "direct %s", name)
			assert.LessOrEqual(t, relL2(accumGrids(full), accumGrids(sum)), 1e-6, "direct %s", name)
		}
		for name, cuts := range partitionsOf(totalC) {
			var sum *rf.CoherentResult
			for w := 0; w+1 < len(cuts); w++ {
				o := co
				o.LaneOffset, o.LaneCount = cuts[w], cuts[w+1]-cuts[w]
				part, err := s.AccumDfrCoherentDirect(ctx, p.states, p.grid, p.mat, p.active, o)
				require.NoError(t, err)
				if sum == nil {
					sum = part
				} else {
					require.NoError(t, sum.Add(part))
				}
			}
			assert.Equal(t, fullC.DirectCount, sum.DirectCount, "coherent %s", name)
			assert.Equal(t, fullC.VisibilityRejectCount, sum.VisibilityRejectCount, "coherent %s", name)
			assert.Equal(t, fullC.UtdRejectCount, sum.UtdRejectCount, "coherent %s", name)
			assert.LessOrEqual(t, relL2(coherentGrids(fullC), coherentGrids(sum)), 1e-6, "coherent %s", name)
		}
	}
}

// TestRFGPUBenchFixture: the §10.1 accumulation fixture commits every lane
// and matches the reference.
func TestRFGPUBenchFixture(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	ctx := context.Background()
	mesh, st, g := testscene.AccumFixture()
	tri := []rayd.Mesh{mesh}
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples, opt.Seed = 1<<16, 17
	got, err := gpuScene(t, ords[0], tri).AccumDfrDirect(ctx, st, g, nil, nil, opt)
	require.NoError(t, err)
	want, err := cpuScene(t, tri...).AccumDfrDirect(ctx, st, g, nil, nil, opt)
	require.NoError(t, err)
	assert.Equal(t, []int32{1 << 16, 0, 0, 0, 0, 0, 1 << 16}, accumCounters(got))
	assert.LessOrEqual(t, relL2(accumGrids(want), accumGrids(got)), 1e-6)
}

// TestRFGPUOptiXSceneRunsTheBVHKernels: an OptiX scene runs the RF kernels
// over a BVH built for the call, with the CUDA backend's results.
func TestRFGPUOptiXSceneRunsTheBVHKernels(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	ctx := context.Background()
	p := randomRFProblem(testscene.Rand(t), false)
	ox, err := rayd.NewScene(ctx, p.meshes, rayd.WithBackend(rayd.BackendOptiX), rayd.WithDevice(ords[0]))
	require.NoError(t, err)
	defer ox.Close()
	want, err := gpuScene(t, ords[0], p.meshes).AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
	require.NoError(t, err)
	got, err := ox.AccumDfrDirect(ctx, p.states, p.grid, p.mat, p.active, p.opt)
	require.NoError(t, err)
	assert.Equal(t, accumCounters(want), accumCounters(got))
	assert.LessOrEqual(t, relL2(accumGrids(want), accumGrids(got)), 1e-6)
}
