package rayd_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
)

// TestGPULeakCycles creates, queries and closes scenes RAYD_LEAK_CYCLES
// times (single-device scenes alternating between the first two devices,
// every tenth a replicated 2-GPU scene, each with device buffers): device
// memory (cuMemGetInfo) and goroutines return to their baselines.
func TestGPULeakCycles(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 2)
	ctx := context.Background()
	cycles := envInt("RAYD_LEAK_CYCLES", 60)
	mem := newMemProbe(t, ords[:2])
	r := rand.New(rand.NewPCG(7, 8))
	meshes := []rayd.Mesh{testscene.Soup(r, 3000, 0.03)}
	meshes[0].Dynamic = true
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, _ := testscene.RandomRays(r, tb, 8192)
	rays := rayd.Rays{Origins: o, Directions: d}
	cycle := func(i int) error {
		opts := []rayd.Option{rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(ords[i%2])}
		if i%10 == 9 {
			opts = []rayd.Option{rayd.WithDevices(ords[0], ords[1]), rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1024})}
		}
		s, err := rayd.NewScene(ctx, meshes, opts...)
		if err != nil {
			return err
		}
		defer s.Close()
		if _, err := s.Intersect(ctx, rays, rayd.FlagsAll); err != nil {
			return err
		}
		dr, err := s.UploadRays(ctx, rays)
		if err != nil {
			return err
		}
		defer dr.Close()
		dh, err := s.AllocHits(rays.Len(), rayd.FlagsAll)
		if err != nil {
			return err
		}
		defer dh.Close()
		if err := s.IntersectInto(ctx, dr, dh); err != nil {
			return err
		}
		if err := s.UpdateVertices(ctx, 0, meshes[0].Vertices); err != nil {
			return err
		}
		return s.Close()
	}
	// Warm-up: one cycle of every kind before the baseline. The first
	// launches of the query kernels on a context reserve its local memory
	// (the traversal stacks), which the driver keeps for the context's
	// life; that is a one-time reservation, not a leak.
	for i := range 10 {
		require.NoError(t, cycle(i))
	}
	ignore := goleak.IgnoreCurrent()
	base := mem.used(t)
	goroutines := runtime.NumGoroutine()
	start := time.Now()
	var peak int64
	var growth []int64 // after every 100 cycles
	for i := range cycles {
		require.NoError(t, cycle(i), "cycle %d", i)
		if i%100 == 99 {
			g := maxDelta(base, mem.used(t))
			growth = append(growth, g)
			peak = max(peak, g)
		}
	}
	after := mem.used(t)
	delta := maxDelta(base, after)
	peak = max(peak, delta)
	leaked := goleak.Find(ignore)
	t.Logf("%d cycles in %v: device memory %+d bytes after (largest growth seen %d), goroutines %d -> %d",
		cycles, time.Since(start).Round(time.Millisecond), delta, peak, goroutines, runtime.NumGoroutine())
	assert.LessOrEqual(t, delta, int64(4<<20), "device memory not returned")
	assert.NoError(t, leaked, "goroutines left behind")
	writeEvidence(t, "leak-cycles.json", struct {
		evidenceHeader
		Cycles          int     `json:"cycles"`
		Seconds         float64 `json:"seconds"`
		BaselineUsed    []int64 `json:"baseline_used_bytes"`
		AfterUsed       []int64 `json:"after_used_bytes"`
		MaxDeltaBytes   int64   `json:"max_delta_bytes"`
		LargestGrowth   int64   `json:"largest_growth_bytes"`
		GoroutinesStart int     `json:"goroutines_start"`
		GoroutinesEnd   int     `json:"goroutines_end"`
		GoroutineLeak   string  `json:"goroutine_leak,omitempty"`
		GrowthPer100    []int64 `json:"growth_after_every_100_cycles_bytes"`
	}{header(t, ords[:2]), cycles, time.Since(start).Seconds(), base, after, delta, peak, goroutines, runtime.NumGoroutine(), errString(leaked), growth})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// soakRecord is soak.json: what ran, and how it ended.
type soakRecord struct {
	evidenceHeader
	Workers         int     `json:"workers"`
	Seconds         int     `json:"seconds"`
	Scenes          int64   `json:"scenes"`
	ScenesPerWorker []int64 `json:"scenes_per_worker"`
	QueriesChecked  int64   `json:"queries_checked"`
	WrongResults    int64   `json:"wrong_results"`
	// Hangs counts the workers the watchdog found making no progress for
	// HangLimit seconds; HungWorkers names them.
	Hangs       int    `json:"hangs"`
	HungWorkers []int  `json:"hung_workers,omitempty"`
	HangLimit   int    `json:"hang_limit_seconds"`
	Error       string `json:"error,omitempty"`
	Passed      bool   `json:"passed"`
}

// TestGPUSoak runs 8 goroutines over the first two devices for
// RAYD_SOAK_SECONDS: each builds a random scene (a single-device scene on
// its device, or every fourth a replicated 2-GPU scene), checks intersect
// and reflections against the CPU reference, updates the vertices, checks
// again and drops the scene. A watchdog finds any goroutine whose
// iteration has run for RAYD_SOAK_HANG_SECONDS (60) without finishing: it
// records the hang, writes the evidence and then fails the test, so that
// soak.json reports hangs, wrong results and errors as well as clean runs.
func TestGPUSoak(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 2)
	seconds := envInt("RAYD_SOAK_SECONDS", 8)
	hangLimit := envInt("RAYD_SOAK_HANG_SECONDS", 60)
	hdr := header(t, ords[:2]) // before any worker can hang the driver
	start := time.Now()
	deadline := start.Add(time.Duration(seconds) * time.Second)
	const workers = 8
	var iters, queries, wrong [workers]atomic.Int64
	prog := newProgress(workers, start)
	var firstErr error
	var errMu sync.Mutex
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	var wg sync.WaitGroup
	seed := testscene.Seed(t)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer prog.finish(w)
			r := rand.New(rand.NewPCG(uint64(w), seed))
			for time.Now().Before(deadline) {
				prog.beat(w, time.Now())
				q, bad, err := soakIteration(r, w, ords)
				if err != nil {
					fail(fmt.Errorf("worker %d: %w", w, err))
					return
				}
				iters[w].Add(1)
				queries[w].Add(int64(q))
				wrong[w].Add(int64(bad))
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var hung []int
	var stacks string
	for watching := true; watching; {
		select {
		case <-done:
			watching = false
		case <-time.After(5 * time.Second):
			if hung = prog.hung(time.Now(), time.Duration(hangLimit)*time.Second); len(hung) > 0 {
				buf := make([]byte, 1<<20)
				stacks = string(buf[:runtime.Stack(buf, true)])
				watching = false
			}
		}
	}
	rec := soakRecord{evidenceHeader: hdr, Workers: workers, Seconds: seconds, ScenesPerWorker: make([]int64, workers),
		Hangs: len(hung), HungWorkers: hung, HangLimit: hangLimit}
	for w := range workers {
		rec.ScenesPerWorker[w] = iters[w].Load()
		rec.Scenes += rec.ScenesPerWorker[w]
		rec.QueriesChecked += queries[w].Load()
		rec.WrongResults += wrong[w].Load()
	}
	errMu.Lock()
	err := firstErr
	errMu.Unlock()
	if err != nil {
		rec.Error = err.Error()
	}
	rec.Passed = rec.Hangs == 0 && err == nil && rec.WrongResults == 0 && rec.Scenes > 0
	t.Logf("soak: %d workers, %d s, %d scenes, %d queries checked, %d wrong, %d hangs", workers, seconds, rec.Scenes, rec.QueriesChecked, rec.WrongResults, rec.Hangs)
	writeEvidence(t, "soak.json", rec)
	if len(hung) > 0 {
		t.Fatalf("worker(s) %v made no progress for %d s (evidence written):\n%s", hung, hangLimit, stacks)
	}
	require.NoError(t, err)
	assert.Zero(t, rec.WrongResults, "wrong results against the reference")
	assert.Positive(t, rec.Scenes)
}

// soakIteration is one scene's life: build, check, refit, check, drop. It
// returns the queries checked and how many disagreed with the reference.
func soakIteration(r *rand.Rand, w int, ords []int) (queries, wrong int, err error) {
	ctx := context.Background()
	meshes := []rayd.Mesh{testscene.Soup(r, 1000+r.IntN(4000), 0.05), testscene.Grid(8+r.IntN(16), 2, -0.6)}
	meshes[1].Dynamic = true
	tb, err := geom.BuildTables(meshes)
	if err != nil {
		return 0, 0, err
	}
	n := 1024 + r.IntN(6000)
	if w%4 == 3 {
		n += 4096 // enough rows to shard
	}
	o, d, _ := testscene.RandomRays(r, tb, n)
	rays := rayd.Rays{Origins: o, Directions: d}
	opts := []rayd.Option{rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(ords[w%2])}
	if w%4 == 3 {
		opts = []rayd.Option{rayd.WithDevices(ords[0], ords[1]), rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 512})}
	}
	gpu, err := rayd.NewScene(ctx, meshes, opts...)
	if err != nil {
		return 0, 0, err
	}
	defer gpu.Close()
	cpu, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		return 0, 0, err
	}
	defer cpu.Close()
	check := func() error {
		g, err := gpu.Intersect(ctx, rays, rayd.FlagsAll)
		if err != nil {
			return err
		}
		c, err := cpu.Intersect(ctx, rays, rayd.FlagsAll)
		if err != nil {
			return err
		}
		if m := compareHits(tb, o, d, g, c); m.prim+m.t+m.bary != 0 {
			wrong++
		}
		gr, err := gpu.TraceReflections(ctx, rays, 2)
		if err != nil {
			return err
		}
		cr, err := cpu.TraceReflections(ctx, rays, 2)
		if err != nil {
			return err
		}
		if !testscene.SameReflections(gr, cr) {
			wrong++
		}
		queries += 2
		return nil
	}
	if err := check(); err != nil {
		return queries, wrong, err
	}
	v := append([]float32(nil), meshes[1].Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] += float32(r.Float64()*0.4 - 0.2)
	}
	if err := gpu.UpdateVertices(ctx, 1, v); err != nil {
		return queries, wrong, err
	}
	if err := cpu.UpdateVertices(ctx, 1, v); err != nil {
		return queries, wrong, err
	}
	if err := tb.UpdateVertices(1, v); err != nil {
		return queries, wrong, err
	}
	if err := check(); err != nil {
		return queries, wrong, err
	}
	return queries, wrong, gpu.Close()
}
