package rayd_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// faultOp is one whole operation of the fault sweep: it returns a
// fingerprint of every result it read (equal to the fault-free run's when
// it succeeds) or the first error of any step, Close included.
type faultOp struct {
	name    string
	devices int
	run     func(ctx context.Context) (string, error)
}

// faultRun is one injected fault and what came of it.
type faultRun struct {
	K        int    `json:"k"`
	Symbol   string `json:"symbol"`
	Injected string `json:"injected"`
	Outcome  string `json:"outcome"` // "error" or "success, results equal"
	Error    string `json:"error,omitempty"`
	MemDelta int64  `json:"mem_delta_bytes"`
}

// faultReport is one operation's sweep. Runs holds only the runs where
// the fault fired; a run whose k-th call never came (the call sequence of
// a multi-device operation varies from run to run) is listed in NotFired
// and checked to equal the fault-free results, but not counted.
type faultReport struct {
	Operation string     `json:"operation"`
	Devices   int        `json:"devices"`
	Calls     int        `json:"calls"`
	Symbols   int        `json:"distinct_symbols"`
	Injected  int        `json:"faults_injected"`
	Runs      []faultRun `json:"runs"`
	NotFired  []int      `json:"runs_without_a_fault,omitempty"`
	Clean     bool       `json:"all_clean"`
}

// injectedFor is the status a fault returns: out of memory for an
// allocation, a launch failure for everything else.
func injectedFor(sym string) driver.Result {
	if strings.HasPrefix(sym, "cuMemAlloc") {
		return driver.ErrOutOfMemory
	}
	return driver.ErrLaunchFailed
}

// faultOps are the swept operations: a single-device scene through build,
// host and device queries, a refit and Close; a replicated 2-GPU scene
// through the same plus sharded reflections; 2-GPU lane-sharded
// accumulation.
func faultOps(t *testing.T) []faultOp {
	r := rand.New(rand.NewPCG(41, 42))
	meshes := []rayd.Mesh{testscene.Soup(r, 4000, 0.03), testscene.Grid(24, 2, -0.5)}
	meshes[1].Dynamic = true
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, _ := testscene.RandomRays(r, tb, 20000)
	rays := rayd.Rays{Origins: o, Directions: d}
	moved := append([]float32(nil), meshes[1].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] = -0.4
	}
	queries := func(ctx context.Context, s *rayd.Scene) (string, error) {
		h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
		if err != nil {
			return "", err
		}
		dr, err := s.UploadRays(ctx, rays)
		if err != nil {
			return "", err
		}
		defer dr.Close()
		dh, err := s.AllocHits(rays.Len(), rayd.FlagsAll)
		if err != nil {
			return "", err
		}
		defer dh.Close()
		if err := s.IntersectInto(ctx, dr, dh); err != nil {
			return "", err
		}
		hd, err := dh.Download(ctx)
		if err != nil {
			return "", err
		}
		refl, err := s.TraceReflections(ctx, rays, 2)
		if err != nil {
			return "", err
		}
		if err := s.UpdateVertices(ctx, 1, moved); err != nil {
			return "", err
		}
		h2, err := s.Intersect(ctx, rays, rayd.FlagsNone)
		if err != nil {
			return "", err
		}
		return fingerprintOf(h, hd, refl, h2.T), nil
	}
	whole := func(open func(ctx context.Context) (*rayd.Scene, error), body func(ctx context.Context, s *rayd.Scene) (string, error)) func(ctx context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			s, err := open(ctx)
			if err != nil {
				return "", err
			}
			fp, err := body(ctx, s)
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			return fp, err
		}
	}
	tri, st, g := testscene.AccumFixture()
	opt := rf.DefaultAccumOptions()
	opt.DirectSamples, opt.Seed = 1<<20, 17
	return []faultOp{
		{"single-device scene: build, intersect, device intersect, reflections, refit, close", 1, whole(
			func(ctx context.Context) (*rayd.Scene, error) {
				return rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(0))
			}, queries)},
		{"replicated 2-GPU scene: build, intersect, device intersect, reflections, refit, close", 2, whole(
			func(ctx context.Context) (*rayd.Scene, error) {
				return rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1), rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1024}))
			}, queries)},
		{"replicated 2-GPU accum_dfr_direct, lane-sharded", 2, whole(
			func(ctx context.Context) (*rayd.Scene, error) {
				return rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithDevices(0, 1), rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinLanesPerDevice: 1024}))
			}, func(ctx context.Context, s *rayd.Scene) (string, error) {
				res, err := s.AccumDfrDirect(ctx, st, g, nil, nil, opt)
				if err != nil {
					return "", err
				}
				if d := s.LastDispatch(); d == nil || d.Mode != shard.ModeLaneSharded {
					return "", fmt.Errorf("accumulation was not lane-sharded: %+v", d)
				}
				return fingerprintOf(res.Power, []int32{res.DirectCount, res.VisRejects, res.UtdRejects}), nil
			})},
	}
}

// guarded runs fn with a watchdog and turns a panic into a failure.
func guarded(t *testing.T, what string, limit time.Duration, fn func() (string, error)) (fp string, err error) {
	type result struct {
		fp  string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("PANIC: %v\n%s", p, debug.Stack())}
			}
		}()
		fp, err := fn()
		done <- result{fp, err}
	}()
	select {
	case r := <-done:
		return r.fp, r.err
	case <-time.After(limit):
		t.Fatalf("%s: no return after %v (hang)", what, limit)
		return "", nil
	}
}

// TestGPUFaultSweep fails the k-th driver call of each operation, k swept
// over the operation (every call up to RAYD_FAULT_RUNS per operation, else
// evenly spaced, always including the first call of every distinct
// function): the operation returns an error that names the function, or
// succeeds with exactly the fault-free results; nothing panics or hangs;
// device memory returns to its baseline.
func TestGPUFaultSweep(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 2)
	ctx := context.Background()
	mem := newMemProbe(t, ords[:2])
	perOp := envInt("RAYD_FAULT_RUNS", 40)
	const slack = 8 << 20
	var reports []faultReport
	for _, op := range faultOps(t) {
		// Fault-free run: the reference fingerprint and the call sequence.
		var mu sync.Mutex
		var syms []string
		restore := driver.InjectFaults(func(sym string) driver.Result {
			mu.Lock()
			syms = append(syms, sym)
			mu.Unlock()
			return driver.Success
		})
		want, err := guarded(t, op.name, time.Minute, func() (string, error) { return op.run(ctx) })
		restore()
		require.NoError(t, err, op.name)
		ks := sweepPoints(syms, perOp)
		rep := faultReport{Operation: op.name, Devices: op.devices, Calls: len(syms), Symbols: len(distinct(syms)), Clean: true}
		for _, k := range ks {
			base := mem.used(t)
			var n atomic.Int64
			var hitSym atomic.Pointer[string]
			restore := driver.InjectFaults(func(sym string) driver.Result {
				if n.Add(1) == int64(k) {
					hitSym.Store(&sym)
					return injectedFor(sym)
				}
				return driver.Success
			})
			fp, err := guarded(t, fmt.Sprintf("%s, fault at call %d", op.name, k), time.Minute, func() (string, error) { return op.run(ctx) })
			restore()
			run := faultRun{K: k}
			p := hitSym.Load()
			if p == nil {
				// The k-th call never came: no fault fired. The run must
				// still give the fault-free results; it is not counted.
				assert.NoError(t, err, "%s, call %d: no fault fired", op.name, k)
				assert.Equal(t, want, fp, "%s, call %d: no fault fired, yet the results differ", op.name, k)
				rep.Clean = rep.Clean && err == nil && fp == want
				rep.NotFired = append(rep.NotFired, k)
				continue
			}
			run.Symbol = *p
			run.Injected = injectedFor(*p).Name()
			clean := true
			switch {
			case err != nil && strings.HasPrefix(err.Error(), "PANIC"):
				run.Outcome, run.Error, clean = "panic", err.Error(), false
			case err != nil:
				run.Outcome, run.Error = "error", err.Error()
				var ce *driver.CallError
				named := errors.As(err, &ce) || strings.Contains(err.Error(), run.Symbol)
				if !named || !errors.Is(err, injectedFor(run.Symbol)) {
					clean = false
					run.Outcome = "error without the injected function and status"
				}
			case fp == want:
				run.Outcome = "success, results equal"
			default:
				run.Outcome, clean = "SUCCESS WITH WRONG RESULTS", false
			}
			run.MemDelta = maxDelta(base, mem.used(t))
			if run.MemDelta > slack && releaseCall(run.Symbol) {
				run.Outcome += "; the failed call was a release, so its memory stays allocated"
			} else if run.MemDelta > slack {
				clean = false
				run.Outcome += fmt.Sprintf("; %d bytes not released", run.MemDelta)
			}
			assert.True(t, clean, "%s, call %d (%s): %s %s", op.name, k, run.Symbol, run.Outcome, run.Error)
			rep.Clean = rep.Clean && clean
			rep.Runs = append(rep.Runs, run)
		}
		rep.Injected = len(rep.Runs)
		assert.Positive(t, rep.Injected, "%s: no fault fired", op.name)
		t.Logf("%s: %d driver calls (%d functions), %d faults injected (%d runs without a fault, not counted), clean %v",
			op.name, rep.Calls, rep.Symbols, rep.Injected, len(rep.NotFired), rep.Clean)
		reports = append(reports, rep)
	}
	writeEvidence(t, "fault-sweep.json", struct {
		evidenceHeader
		Operations []faultReport `json:"operations"`
	}{header(t, ords[:2]), reports})
}

// releaseCall reports whether sym gives memory back: when the fault stops
// it, the memory it would have freed stays allocated, which no caller can
// undo; the sweep records the figure without judging it.
func releaseCall(sym string) bool {
	for _, p := range []string{"cuMemFree", "cuModuleUnload", "cuMemPoolTrimTo", "cuDevicePrimaryCtxRelease", "cuCtxDestroy"} {
		if strings.HasPrefix(sym, p) {
			return true
		}
	}
	return false
}

// sweepPoints picks the 1-based call indices to fail: every call when
// there are at most perOp, else the first call of every distinct function
// plus evenly spaced calls up to perOp in total.
func sweepPoints(syms []string, perOp int) []int {
	if len(syms) <= perOp {
		out := make([]int, len(syms))
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	seen := map[string]bool{}
	pick := map[int]bool{}
	for i, s := range syms {
		if !seen[s] {
			seen[s] = true
			pick[i+1] = true
		}
	}
	for j := 0; len(pick) < perOp && j < perOp; j++ {
		pick[1+j*len(syms)/perOp] = true
	}
	var out []int
	for k := 1; k <= len(syms); k++ {
		if pick[k] {
			out = append(out, k)
		}
	}
	return out
}

func distinct(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}
