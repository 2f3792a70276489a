package accel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// optixWatchdog bounds one concurrency trial: a hang (the failure mode of
// RayD's concurrent-driving deadlock) fails the test with every goroutine's
// stack instead of stalling the run.
const optixWatchdog = 180 * time.Second

// uploadTo copies src into a new buffer of s's device (queued on s).
func uploadTo[T launch.Elem](s *launch.Stream, src []T) (*launch.Buffer[T], error) {
	b, err := launch.Alloc[T](s.Device(), max(len(src), 1))
	if err != nil {
		return nil, err
	}
	if err := b.Upload(s, src); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

// sceneRound builds one random scene's OptiX structure on a fresh stream of
// d, checks a batch of intersections against the reference and drops it all.
func sceneRound(d *launch.Device, seed uint64) (time.Duration, error) {
	s, err := d.NewStream()
	if err != nil {
		return 0, err
	}
	defer s.Close()
	_, meshes := randomMeshes(rand.New(rand.NewPCG(seed, 11)), int(seed%3))
	tb, err := geom.BuildTables(meshes)
	if err != nil {
		return 0, err
	}
	sc, err := ref.NewScene(tb)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	ox, err := BuildOptiX(s, tb)
	if err != nil {
		return 0, err
	}
	defer ox.Close()
	n := 1024
	o, dir, tmax, active := testRays(tb, n, seed)
	var bufs []interface{ Close() error }
	defer func() {
		for _, b := range bufs {
			_ = b.Close()
		}
	}()
	in := make([]*launch.Buffer[float32], 3)
	for i, src := range [][]float32{o, dir, tmax} {
		if in[i], err = uploadTo(s, src); err != nil {
			return 0, err
		}
		bufs = append(bufs, in[i])
	}
	act := make([]uint8, n)
	for i, a := range active {
		if a {
			act[i] = 1
		}
	}
	actBuf, err := uploadTo(s, act)
	if err != nil {
		return 0, err
	}
	bufs = append(bufs, actBuf)
	var h Hits
	f32 := []**launch.Buffer[float32]{&h.T, &h.P, &h.N, &h.GeoN, &h.UV, &h.Bary}
	for i, p := range f32 {
		w := []int{1, 3, 3, 3, 2, 3}[i]
		if *p, err = launch.Alloc[float32](d, w*n); err != nil {
			return 0, err
		}
		bufs = append(bufs, *p)
	}
	for _, p := range []**launch.Buffer[int32]{&h.ShapeID, &h.PrimID, &h.LocalPrimID, &h.GlobalPrimID} {
		if *p, err = launch.Alloc[int32](d, n); err != nil {
			return 0, err
		}
		bufs = append(bufs, *p)
	}
	if err := ox.Intersect(s, Rays{O: in[0], D: in[1], TMax: in[2], Active: actBuf, N: n}, geom.FlagsAll, h); err != nil {
		return 0, err
	}
	got := geom.NewHits(n, geom.FlagsAll)
	for _, x := range []struct {
		dst []float32
		b   *launch.Buffer[float32]
	}{{got.T, h.T}, {got.P, h.P}, {got.N, h.N}, {got.GeoN, h.GeoN}, {got.UV, h.UV}, {got.Bary, h.Bary}} {
		if err := x.b.Download(s, x.dst); err != nil {
			return 0, err
		}
	}
	for _, x := range []struct {
		dst []int32
		b   *launch.Buffer[int32]
	}{{got.ShapeID, h.ShapeID}, {got.PrimID, h.PrimID}, {got.LocalPrimID, h.LocalPrimID}, {got.GlobalPrimID, h.GlobalPrimID}} {
		if err := x.b.Download(s, x.dst); err != nil {
			return 0, err
		}
	}
	took := time.Since(start)
	want, err := sc.Intersect(o, dir, tmax, active, geom.FlagsAll)
	if err != nil {
		return 0, err
	}
	_, err = (&parityScene{tb: tb, sc: sc}).checkHits(o, dir, tmax, active, got, want)
	return took, err
}

// concurrentRounds runs rounds scene rounds on each listed device ordinal at
// once (one goroutine per entry; each opens and closes its own Device) under
// the watchdog, and returns the per-worker round times.
func concurrentRounds(t *testing.T, ords []int, rounds int, seed uint64) [][]time.Duration {
	t.Helper()
	times := make([][]time.Duration, len(ords))
	errs := make([]error, len(ords))
	var wg sync.WaitGroup
	for w, ord := range ords {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := launch.Open(ord)
			if err != nil {
				errs[w] = err
				return
			}
			defer d.Close()
			for r := range rounds {
				took, err := sceneRound(d, seed+uint64(100*w+r))
				if err != nil {
					errs[w] = fmt.Errorf("worker %d (cuda:%d) round %d: %w", w, ord, r, err)
					return
				}
				times[w] = append(times[w], took)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(optixWatchdog):
		buf := make([]byte, 8<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("watchdog: workers still running after %v\n%s", optixWatchdog, buf[:n])
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return times
}

// TestGPUOptiXConcurrentOneDevice: two goroutines build, query and drop
// OptiX scenes on one device at once (the first trial from no OptiX context
// at all, so both race its creation), repeated under a watchdog.
func TestGPUOptiXConcurrentOneDevice(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	for trial := range optixTrials {
		if trial == 0 {
			if err := launch.ShutdownOptiX(); err != nil {
				t.Fatal(err)
			}
		}
		times := concurrentRounds(t, []int{ords[0], ords[0]}, 4, uint64(1000*trial))
		t.Logf("trial %d: round times per worker %v", trial, times)
	}
}

// TestGPUOptiXConcurrentTwoDevices: one goroutine per device builds, queries
// and drops scenes concurrently, the first trial racing the creation of both
// devices' contexts, repeated under a watchdog.
func TestGPUOptiXConcurrentTwoDevices(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	for trial := range optixTrials {
		if trial == 0 {
			if err := launch.ShutdownOptiX(); err != nil {
				t.Fatal(err)
			}
		}
		times := concurrentRounds(t, []int{0, 1, 0, 1}, 3, uint64(5000+1000*trial))
		t.Logf("trial %d: round times per worker %v", trial, times)
	}
}

// optixTimingEnv marks the child run of TestGPUOptiXColdWarmFirstIntersect.
const optixTimingEnv = "RAYD_OPTIX_TIMING_CHILD"

// firstIntersectTiming is what the child measures in a fresh process.
type firstIntersectTiming struct {
	Context, Pipelines, Build, FirstIntersect, SecondIntersect, Total float64 // seconds
	Cache                                                             launch.OptiXCacheInfo
}

// TestGPUOptiXColdWarmFirstIntersect runs the test binary twice as a child
// sharing a fresh OPTIX_CACHE_PATH: the first child compiles the OptiX
// module cold, the second finds it in the disk cache. Each child logs how
// long its first intersect took, split into context creation, module and
// pipeline builds, GAS build and the launch itself.
func TestGPUOptiXColdWarmFirstIntersect(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	if os.Getenv(optixTimingEnv) != "" {
		firstIntersectChild(t)
		return
	}
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, launch.EnvOptiXCacheMaxSize+"=") && !strings.HasPrefix(kv, launch.EnvOptiXCachePath+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, optixTimingEnv+"=1", launch.EnvOptiXCachePath+"="+dir)
	for _, phase := range []string{"cold", "warm"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGPUOptiXColdWarmFirstIntersect$", "-test.v", "-test.count=1")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", phase, err, out)
		}
		var line string
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "OPTIX_TIMING "); i >= 0 {
				line = sc.Text()[i+len("OPTIX_TIMING "):]
			}
		}
		var tm firstIntersectTiming
		if err := json.Unmarshal([]byte(line), &tm); err != nil {
			t.Fatalf("%s child printed no timing (%v):\n%s", phase, err, out)
		}
		t.Logf("%s first intersect: total %.3f s = context %.3f + module/pipelines %.3f + GAS build %.3f + launch %.3f (second launch %.4f s); cache %+v",
			phase, tm.Total, tm.Context, tm.Pipelines, tm.Build, tm.FirstIntersect, tm.SecondIntersect, tm.Cache)
	}
}

// firstIntersectChild is the child body: a fresh process's first intersect.
func firstIntersectChild(t *testing.T) {
	var tm firstIntersectTiming
	start := time.Now()
	d, err := launch.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lap := time.Now()
	ctx, err := d.OptiX()
	if err != nil {
		t.Fatal(err)
	}
	tm.Context, lap = time.Since(lap).Seconds(), time.Now()
	if _, _, err := loadOptiXPipelines(d); err != nil {
		t.Fatal(err)
	}
	tm.Pipelines, lap = time.Since(lap).Seconds(), time.Now()
	tb := tables(t, cloudMesh(20000, 0.02, 3))
	ox, err := BuildOptiX(s, tb)
	if err != nil {
		t.Fatal(err)
	}
	defer ox.Close()
	tm.Build = time.Since(lap).Seconds()
	o, dir, tmax, active := testRays(tb, 1<<14, 1)
	rb := newRayBatch(t, s, o, dir, tmax, active)
	out := Hits{T: devOut[float32](t, s, rb.dev.N)}
	for i, dst := range []*float64{&tm.FirstIntersect, &tm.SecondIntersect} {
		lap = time.Now()
		if err := ox.Intersect(s, rb.dev, geom.FlagsNone, out); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		*dst = time.Since(lap).Seconds()
		if i == 0 {
			tm.Total = time.Since(start).Seconds()
		}
	}
	tm.Cache, _ = ctx.CacheInfo()
	b, _ := json.Marshal(tm)
	fmt.Printf("OPTIX_TIMING %s\n", b)
}
