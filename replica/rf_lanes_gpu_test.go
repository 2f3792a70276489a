package replica_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// residentTol is the grid tolerance of a resident call against one device:
// relative L2 (the partials are folded in float64 and rounded to float32
// once, the device's own conversion).
const residentTol = 1e-6

func dfrGrids(r *rf.AccumResult) [][]float64 {
	return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
}

func dfrCounters(r *rf.AccumResult) []int32 {
	return []int32{r.DirectCount, r.KellerCount, r.SuffixCount, r.VisRejects, r.EdgeVisRejects, r.UtdRejects, r.EdgeUses}
}

// directTask is accum_dfr_direct over the workload's whole lane space.
func (w *rfWork) directTask() *shard.AccumDfrDirect {
	return &shard.AccumDfrDirect{Faces: w.tables.NumFaces(), States: w.states, Grid: w.grid, Material: w.mat,
		Active: w.active, Options: w.opt}
}

// wantDirect is the one-device accum_dfr_direct of the workload on s.
func (w *rfWork) wantDirect(t *testing.T, s *single, tables *geom.Tables) *rf.AccumResult {
	t.Helper()
	o := w.opt
	o.LaneCount = o.DirectSamples + o.KellerSamples + o.SuffixSamples
	want, err := s.bvh.AccumDfrDirectHost(s.s, w.states, w.grid, w.mat, w.active, o, tables.NumFaces(), tables.Triangle)
	require.NoError(t, err)
	require.Positive(t, want.EdgeUses, "the workload commits nothing")
	return want
}

func requireDirect(t *testing.T, want, got *rf.AccumResult, what string) {
	t.Helper()
	require.Equal(t, dfrCounters(want), dfrCounters(got), "%s: counters", what)
	require.LessOrEqual(t, rfRelL2(dfrGrids(want), dfrGrids(got)), residentTol, "%s: grids", what)
}

func uploaded(reps []*replica.Replica) []int64 {
	out := make([]int64, len(reps))
	for i, r := range reps {
		out[i] = r.Stats().Uploaded
	}
	return out
}

// TestGPURFResidentMatchesOneDevice: the three resident grid_reduce
// operations on two replicas, sharded and chunked, equal the one-device
// launches (counters exactly, grids to 1e-6 relative L2) when every
// resident buffer was poisoned before the call; the remote's partial is
// read where it lies (nothing gathered).
func TestGPURFResidentMatchesOneDevice(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := newRFWork(t, f)
	faces, tri := w.tables.NumFaces(), w.tables.Triangle
	wantD := w.wantDirect(t, f.ref, w.tables)
	co := rf.DefaultCoherentOptions()
	co.LaneCount = w.states.StateCount() * w.grid.Cells()
	wantC, err := f.ref.bvh.AccumDfrCoherentHost(f.ref.s, w.states, w.grid, w.mat, w.active, co, faces, tri)
	require.NoError(t, err)
	co.LaneCount = -1
	wantR, err := f.ref.bvh.AccumulateReflectionsHost(f.ref.s, w.rays, w.rgrid, w.mat, 3, w.ropt, faces)
	require.NoError(t, err)
	require.Positive(t, wantR.ReflectionCount)
	cg := func(r *rf.CoherentResult) [][]float64 {
		return [][]float64{r.DirectFieldXRe, r.DirectFieldXIm, r.DirectFieldYRe, r.DirectFieldYIm, r.DirectFieldZRe, r.DirectFieldZIm}
	}
	rg := func(r *rf.ReflResult) [][]float64 {
		return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
	}
	for _, mode := range []struct {
		name       string
		o          shard.Options
		lane, rows shard.Mode
	}{
		{"sharded", shard.Options{MinLanesPerDevice: 1, MinRaysPerDevice: 1}, shard.ModeLaneSharded, shard.ModeBatchSharded},
		{"chunked", shard.Options{ChunkRays: 4096, MinLanesPerDevice: 1}, shard.ModeLaneChunked, shard.ModeBatchChunked},
	} {
		t.Run(mode.name, func(t *testing.T) {
			l, reps := f.layer(t, mode.o)
			gathered := reps[1].Stats().Gathered
			for round := range 2 {
				if round == 1 { // the buffers exist now and are large enough: poison them
					for _, r := range reps {
						require.NoError(t, replica.PoisonLanes(r))
						require.Positive(t, replica.LaneBytes(r), "cuda:%d kept nothing resident", r.Device())
					}
				}
				got, err := shard.RunAccumDfrDirect(ctx, l, w.directTask())
				require.NoError(t, err)
				require.Equal(t, mode.lane, l.LastDispatch().Mode)
				requireDirect(t, wantD, got, "accum_dfr_direct")

				gotC, err := shard.RunAccumDfrCoherentDirect(ctx, l, &shard.AccumDfrCoherentDirect{Faces: faces,
					States: w.states, Grid: w.grid, Material: w.mat, Active: w.active, Options: co})
				require.NoError(t, err)
				require.Equal(t, mode.lane, l.LastDispatch().Mode)
				assert.Equal(t, wantC.DirectCount, gotC.DirectCount)
				assert.Equal(t, wantC.VisibilityRejectCount, gotC.VisibilityRejectCount)
				assert.Equal(t, wantC.UtdRejectCount, gotC.UtdRejectCount)
				assert.Equal(t, make([]int32, w.grid.Cells()), gotC.MultiCount)
				assert.LessOrEqual(t, rfRelL2(cg(wantC), cg(gotC)), residentTol, "coherent grids")

				gotR, err := shard.RunAccumulateReflections(ctx, l, &shard.AccumulateReflections{Faces: faces,
					Rays: w.rays, Grid: w.rgrid, Material: w.mat, MaxBounces: 3, Options: w.ropt})
				require.NoError(t, err)
				require.Equal(t, mode.rows, l.LastDispatch().Mode)
				assert.Equal(t, wantR.ReflectionCount, gotR.ReflectionCount)
				assert.Equal(t, wantR.RayCount, gotR.RayCount)
				assert.LessOrEqual(t, rfRelL2(rg(wantR), rg(gotR)), residentTol, "reflection grids")
			}
			assert.Equal(t, gathered, reps[1].Stats().Gathered, "a partial was copied to the master")
			assert.NoError(t, l.Poisoned())
		})
	}
}

// TestGPURFResidentSeesChangedInputs: an identical call reuses the packed
// states (nothing uploaded); a state or the active mask changed in place
// in the caller's slices is seen by the next call, which equals the
// one-device launch on the changed inputs.
func TestGPURFResidentSeesChangedInputs(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := newRFWork(t, f)
	l, reps := f.layer(t, shard.Options{MinLanesPerDevice: 1})
	run := func(what string) {
		t.Helper()
		want := w.wantDirect(t, f.ref, w.tables)
		got, err := shard.RunAccumDfrDirect(ctx, l, w.directTask())
		require.NoError(t, err, what)
		require.Equal(t, shard.ModeLaneSharded, l.LastDispatch().Mode)
		requireDirect(t, want, got, what)
	}
	original := w.wantDirect(t, f.ref, w.tables)
	run("first call")
	before := uploaded(reps)
	run("identical call")
	assert.Equal(t, before, uploaded(reps), "an identical call uploaded its inputs again")

	w.states.EdgePos[2] += 0.3 // state 0 moves up: every lane of it changes
	changed := w.wantDirect(t, f.ref, w.tables)
	require.Greater(t, rfRelL2(dfrGrids(original), dfrGrids(changed)), 1e-3, "the change must show in the grids")
	run("a state changed in place")
	for i, u := range uploaded(reps) {
		assert.Greater(t, u, before[i], "cuda:%d reused stale states", reps[i].Device())
	}

	before = uploaded(reps)
	w.active[0] = !w.active[0]
	run("the active mask changed in place")
	for i, u := range uploaded(reps) {
		assert.Greater(t, u, before[i], "cuda:%d reused a stale active mask", reps[i].Device())
	}
	w.active[0] = !w.active[0]
	w.states.EdgePos[2] -= 0.3
	run("the original inputs again")
}

// TestGPURFResidentGeometryUpdate: a vertex update and sync of the mesh the
// states' faces belong to (half the ground raised over the grid plane)
// invalidates the packed states (their suffix triangles are the ground's):
// the next call packs again, waits for the refit, and equals a fresh
// one-device build of the updated meshes.
func TestGPURFResidentGeometryUpdate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := newRFWork(t, f)
	l, reps := f.layer(t, shard.Options{MinLanesPerDevice: 1})
	original := w.wantDirect(t, f.ref, w.tables)
	got, err := shard.RunAccumDfrDirect(ctx, l, w.directTask())
	require.NoError(t, err)
	requireDirect(t, original, got, "before the update")

	moved := slices.Clone(f.meshes[0].Vertices)
	for i := 0; i < len(moved); i += 3 {
		if moved[i] < 0 {
			moved[i+2] += 0.5 // half the ground rises above the grid plane z = 0: it shades half the cells
		}
	}
	require.NoError(t, l.Broadcast(ctx, shard.UpdateVertices{Mesh: 0, Vertices: moved}))
	require.NoError(t, l.Broadcast(ctx, shard.SyncGeometry{}))
	updated := slices.Clone(f.meshes)
	updated[0].Vertices = moved
	tables, err := geom.BuildTables(updated)
	require.NoError(t, err)
	fresh := newSingle(t, f.src, updated)
	want := w.wantDirect(t, fresh, tables)
	require.Greater(t, rfRelL2(dfrGrids(original), dfrGrids(want)), 1e-4, "the update must show in the grids")

	before := uploaded(reps)
	got, err = shard.RunAccumDfrDirect(ctx, l, w.directTask())
	require.NoError(t, err)
	requireDirect(t, want, got, "after the update")
	for i, u := range uploaded(reps) {
		assert.Greater(t, u, before[i], "cuda:%d reused states packed against the old geometry", reps[i].Device())
	}
}

// symbolCounter counts driver calls by entry point (context binds apart)
// through the driver's fault hook, which sees every call and fails none.
type symbolCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func countSymbols(t *testing.T) *symbolCounter {
	c := &symbolCounter{calls: map[string]int{}}
	restore := driver.InjectFaults(func(sym string) driver.Result {
		if sym != "cuCtxSetCurrent" {
			c.mu.Lock()
			c.calls[sym]++
			c.mu.Unlock()
		}
		return driver.Success
	})
	t.Cleanup(restore)
	return c
}

func (c *symbolCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.calls
	c.calls = map[string]int{}
	return m
}

// TestGPURFResidentSteadyStateIsLean: once warm, an accum_dfr_direct call
// on two replicas with unchanged inputs makes at most 30 driver calls
// (13 by construction: see replica/rf_lanes.go), allocates and frees no
// device memory, creates no event and uploads nothing.
func TestGPURFResidentSteadyStateIsLean(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := newRFWork(t, f)
	l, reps := f.layer(t, shard.Options{MinLanesPerDevice: 1})
	want := w.wantDirect(t, f.ref, w.tables)
	for range 2 { // the first call allocates, packs and loads the fold module
		got, err := shard.RunAccumDfrDirect(ctx, l, w.directTask())
		require.NoError(t, err)
		requireDirect(t, want, got, "warm-up")
	}
	require.Equal(t, shard.ModeLaneSharded, l.LastDispatch().Mode)
	devs := distinct(f.devices)
	base := make([]int64, len(devs))
	for i, ord := range devs {
		d, err := f.src.Device(ord)
		require.NoError(t, err)
		d.ResetPeak()
		base[i], _ = d.Allocated()
	}
	up := uploaded(reps)
	counter := countSymbols(t)
	task := w.directTask()
	calls0, binds0 := driver.CallCounts()
	got, err := shard.RunAccumDfrDirect(ctx, l, task)
	calls1, binds1 := driver.CallCounts()
	bySymbol := counter.take()
	require.NoError(t, err)
	requireDirect(t, want, got, "steady state")
	var list []string
	for _, s := range slices.Sorted(maps.Keys(bySymbol)) {
		list = append(list, s+"×"+strconv.Itoa(bySymbol[s]))
	}
	t.Logf("steady-state accum_dfr_direct on %v: %d driver calls (%s), %d context binds", f.devices, calls1-calls0,
		strings.Join(list, " "), binds1-binds0)
	assert.LessOrEqual(t, calls1-calls0, int64(30), "driver calls")
	for _, sym := range []string{"cuEventCreate", "cuMemAlloc_v2", "cuMemAllocAsync", "cuMemFree_v2", "cuMemFreeAsync",
		"cuMemcpyHtoDAsync_v2", "cuMemcpyHtoD_v2", "cuMemcpyPeerAsync", "cuModuleLoadDataEx"} {
		assert.Zero(t, bySymbol[sym], "%s in a steady-state call", sym)
	}
	for i, ord := range devs {
		d, _ := f.src.Device(ord)
		cur, peak := d.Allocated()
		assert.Equal(t, base[i], cur, "cuda:%d: allocation", ord)
		assert.Equal(t, base[i], peak, "cuda:%d: a transient allocation", ord)
	}
	assert.Equal(t, up, uploaded(reps), "inputs uploaded again")
}
