package replica_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// allocated returns the bytes allocated through each device of the layer.
func (f *fixture) allocated(t *testing.T) []int64 {
	var out []int64
	for _, ord := range distinct(f.devices) {
		d, err := f.src.Device(ord)
		require.NoError(t, err)
		a, _ := d.Allocated()
		out = append(out, a)
	}
	return out
}

// noChunkMemory checks that a call left no chunk memory behind: no staging
// block is still handed out, and the devices hold no more than before
// except the staging the replicas keep for reuse.
func (f *fixture) noChunkMemory(t *testing.T, reps []*replica.Replica, before []int64, staged int64, what string) {
	t.Helper()
	for i, r := range reps {
		assert.Zero(t, r.Stats().StagingInUse, "%s: replica %d kept a staging block", what, i)
	}
	grown := stagingBytes(reps) - staged
	after := f.allocated(t)
	var total, was int64
	for i := range after {
		total, was = total+after[i], was+before[i]
	}
	assert.Equal(t, was, total-grown, "%s leaked chunk memory", what)
}

// stagingBytes is the staging memory the replicas hold for reuse.
func stagingBytes(reps []*replica.Replica) int64 {
	var n int64
	for _, r := range reps {
		n += r.Stats().StagingBytes
	}
	return n
}

// TestGPUOffloadStreamsEveryRowOnce: with an offload hook, every chunk is
// handed out once, the chunks cover every row exactly once, and their
// records are the one-device rows; no chunk memory outlives the call.
func TestGPUOffloadStreamsEveryRowOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	const n = 12_345
	ref := f.reference(t, n)
	var mu sync.Mutex
	seen := make([]int, n)
	var parts []shard.Part[*geom.Hits]
	hook := shard.OffloadAs(func(start int, h *geom.Hits) error {
		mu.Lock()
		defer mu.Unlock()
		for i := range h.Len() {
			seen[start+i]++
		}
		parts = append(parts, shard.Part[*geom.Hits]{Start: start, Stop: start + h.Len(), Record: h})
		return nil
	})
	l, reps := f.layer(t, shard.Options{ChunkRays: 1000, Offload: hook})
	task := &shard.Intersect{O: ref.b.o, D: ref.b.d, TMax: ref.b.tmax, Active: ref.b.active, Flags: geom.FlagsAll}
	before, staged := f.allocated(t), stagingBytes(reps)
	res, err := shard.RunRows(ctx, l, task)
	require.NoError(t, err)
	assert.Nil(t, res, "an offloaded call returns no record")
	for i, c := range seen {
		require.Equal(t, 1, c, "row %d was handed out %d times", i, c)
	}
	assert.Equal(t, l.LastChunkPlan().ChunkCount, len(parts))
	sortParts(parts)
	got, err := task.Assemble(n, parts)
	require.NoError(t, err)
	sameHits(t, "offloaded intersect", got, ref.all)
	assert.Equal(t, int64(n), reps[0].Stats().Rows+reps[1].Stats().Rows, "rows launched")
	f.noChunkMemory(t, reps, before, staged, "an offloaded call")
}

// TestGPUBudgetTooSmallFailsBeforeLaunch: an impossible memory budget is
// refused by the planner; no replica launched or allocated anything.
func TestGPUBudgetTooSmallFailsBeforeLaunch(t *testing.T) {
	f := newFixture(t)
	b := f.batch(t, 4096)
	l, reps := f.layer(t, shard.Options{MemoryBudgetBytes: 4096})
	before := f.allocated(t)
	_, err := shard.RunRows(context.Background(), l, &shard.Intersect{O: b.o, D: b.d, Flags: geom.FlagsAll})
	require.ErrorIs(t, err, shard.ErrBudget)
	for i, r := range reps {
		assert.Zero(t, r.Stats().Launches, "replica %d launched", i)
		assert.Zero(t, r.Stats().Uploaded, "replica %d received rows", i)
	}
	assert.Equal(t, before, f.allocated(t))
	assert.NoError(t, l.Poisoned())
}

// TestGPUBudgetBoundsPeakMemory: a streamed 250k-row intersect under a
// 16 MiB budget allocates at most budget + 8 MiB per replica on each device
// at any time (the spec's measured check; the counters are launch's). The
// budget holds per position of the device list, so a device that carries
// two replicas may hold two budgets.
func TestGPUBudgetBoundsPeakMemory(t *testing.T) {
	f := newFixture(t)
	const budget = 16 << 20
	b := f.batch(t, 250_000)
	rows := 0
	hook := shard.OffloadAs(func(_ int, h *geom.Hits) error { rows += h.Len(); return nil })
	l, _ := f.layer(t, shard.Options{MemoryBudgetBytes: budget, Offload: hook})
	devs := distinct(f.devices)
	base := make([]int64, len(devs))
	for i, ord := range devs {
		d, err := f.src.Device(ord)
		require.NoError(t, err)
		d.ResetPeak()
		base[i], _ = d.Allocated()
	}
	_, err := shard.RunRows(context.Background(), l, &shard.Intersect{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Flags: geom.FlagsAll})
	require.NoError(t, err)
	assert.Equal(t, 250_000, rows)
	for i, ord := range devs {
		d, _ := f.src.Device(ord)
		_, peak := d.Allocated()
		slots := int64(0)
		for _, x := range f.devices {
			if x == ord {
				slots++
			}
		}
		t.Logf("cuda:%d: peak %d bytes above the scene for %d replica(s) (%d chunks of %d rows)", ord, peak-base[i], slots,
			l.LastChunkPlan().ChunkCount, l.LastChunkPlan().ChunkRays)
		assert.LessOrEqual(t, peak-base[i], slots*(budget+8<<20), "cuda:%d", ord)
	}
}

// TestGPUCancellationLeavesTheLayerUsable: a context cancelled mid-call (by
// the offload hook, so at a known chunk) ends the call with an error that
// wraps context.Canceled, releases every chunk, does not poison the layer,
// and the next call is bitwise the one-device answer.
func TestGPUCancellationLeavesTheLayerUsable(t *testing.T) {
	f := newFixture(t)
	const n = 20_011
	ref := f.reference(t, n)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	calls, cancelAt := 0, 3
	var parts []shard.Part[*geom.Reflections]
	hook := shard.OffloadAs(func(start int, r *geom.Reflections) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == cancelAt {
			cancel()
		}
		parts = append(parts, shard.Part[*geom.Reflections]{Start: start, Stop: start + r.Len(), Record: r})
		return nil
	})
	l, reps := f.layer(t, shard.Options{ChunkRays: 997, Offload: hook})
	task := &shard.TraceReflections{O: ref.b.o, D: ref.b.d, TMax: ref.b.tmax, Active: ref.b.active, Bounces: 4}
	before := f.allocated(t)
	staged := stagingBytes(reps)
	_, err := shard.RunRows(ctx, l, task)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, cancelAt, calls, "the hook ran after the cancellation")
	assert.NoError(t, l.Poisoned())
	f.noChunkMemory(t, reps, before, staged, "a cancelled call")

	_, err = shard.RunRows(ctx, l, task) // already cancelled: refused at the first boundary
	require.ErrorIs(t, err, context.Canceled)

	mu.Lock()
	calls, cancelAt, parts = 0, -1, nil
	mu.Unlock()
	_, err = shard.RunRows(context.Background(), l, task)
	require.NoError(t, err)
	sortParts(parts)
	got, err := task.Assemble(n, parts)
	require.NoError(t, err)
	sameRefl(t, "after cancellation", got, ref.refl4)
}

func sortParts[R any](p []shard.Part[R]) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j].Start < p[j-1].Start; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// TestGPUBroadcastVertexUpdate: a broadcast vertex update is invisible
// until the broadcast sync; then every query equals a fresh one-device
// build of the updated meshes, and the replicas stay in lockstep.
func TestGPUBroadcastVertexUpdate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	const n = 30_001
	ref := f.reference(t, n)
	l, reps := f.layer(t, shard.Options{MinRaysPerDevice: floor})
	moved := append([]float32(nil), f.meshes[0].Vertices...)
	for i := 0; i < len(moved); i += 3 {
		moved[i+2] += 0.05 * float32((i/3)%7) // a bumpy grid
	}
	require.NoError(t, l.Broadcast(ctx, shard.UpdateVertices{Mesh: 0, Vertices: moved}))
	b := ref.b
	intersect := &shard.Intersect{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Flags: geom.FlagsAll}
	got, err := shard.RunRows(ctx, l, intersect)
	require.NoError(t, err)
	sameHits(t, "before sync", got, ref.all)

	require.NoError(t, l.Broadcast(ctx, shard.SyncGeometry{}))
	updated := append([]geom.Mesh(nil), f.meshes...)
	updated[0].Vertices = moved
	fresh := newSingle(t, f.src, updated)
	got, err = shard.RunRows(ctx, l, intersect)
	require.NoError(t, err)
	assert.Equal(t, shard.ModePipelined, l.LastDispatch().Mode)
	sameHits(t, "after sync", got, fresh.intersect(b, geom.FlagsAll))
	gr, err := shard.RunRows(ctx, l, &shard.TraceReflections{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Bounces: 4})
	require.NoError(t, err)
	sameRefl(t, "reflections after sync", gr, fresh.reflect(b, 4))
	gv, err := shard.RunRows(ctx, l, &shard.Visible{Start: b.o, End: b.d, Active: b.active})
	require.NoError(t, err)
	sameBools(t, "visible after sync", gv, fresh.visible(b))
	for i, r := range reps {
		assert.Equal(t, uint64(2), r.Version(), "replica %d", i)
	}

	err = l.Broadcast(ctx, shard.UpdateVertices{Mesh: 1, Vertices: moved})
	require.ErrorIs(t, err, geom.ErrNotDynamic, "a static mesh refuses updates on every replica")
	require.ErrorIs(t, l.Poisoned(), shard.ErrPoisoned)
}

// TestGPUConcurrentCalls: several goroutines share one layer; every answer
// is still the one-device answer.
func TestGPUConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ref := f.reference(t, 40_009)
	l, _ := f.layer(t, shard.Options{MinRaysPerDevice: floor})
	b := ref.b
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 4 {
		wg.Go(func() {
			for i := range 3 {
				var ok bool
				var err error
				switch (g + i) % 3 {
				case 0:
					var h *geom.Hits
					h, err = shard.RunRows(ctx, l, &shard.Intersect{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Flags: geom.FlagsAll})
					ok = err == nil && testscene.SameHits(h, ref.all)
				case 1:
					var r *geom.Reflections
					r, err = shard.RunRows(ctx, l, &shard.TraceReflections{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Bounces: 4})
					ok = err == nil && testscene.SameReflections(r, ref.refl4)
				default:
					var v []bool
					v, err = shard.RunRows(ctx, l, &shard.Visible{Start: b.o, End: b.d, Active: b.active})
					ok = err == nil && testscene.EqualSlices(v, ref.vis)
				}
				if err == nil && !ok {
					err = fmt.Errorf("goroutine %d call %d: result differs", g, i)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGPUTopology: the driver-backed topology agrees with launch.
func TestGPUTopology(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 2)
	topo := replica.NewTopology()
	require.NoError(t, topo.Err())
	assert.Equal(t, len(ords), topo.DeviceCount())
	for _, d := range ords[:2] {
		info, err := launch.DeviceInfo(d)
		require.NoError(t, err)
		assert.Equal(t, shard.Identity{Name: info.Name, Major: info.CCMajor, Minor: info.CCMinor}, topo.Identity(d))
	}
	for _, p := range [][2]int{{0, 1}, {1, 0}} {
		ok, err := launch.CanAccessPeer(p[0], p[1])
		require.NoError(t, err)
		assert.Equal(t, ok, topo.CanAccessPeer(p[0], p[1]))
	}
	_, err := shard.Plan([]int{0, 1}, topo, shard.Options{})
	if errors.Is(err, shard.ErrNoPeerAccess) || errors.Is(err, shard.ErrHeterogeneous) {
		t.Skipf("this machine's pair is not eligible: %v", err)
	}
	require.NoError(t, err)
}
