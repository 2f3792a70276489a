package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/jobtest"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/dist"
)

// asMainEnv makes the test binary run the command itself (so a launcher
// can start it as a rank); runBinEnv, when set, names a built binary of
// the command to launch instead.
const (
	asMainEnv = "RAYD_ACCUM_GRIDS_AS_MAIN"
	runBinEnv = "RAYD_ACCUM_GRIDS_BIN"
)

// example is this command run as a rank (see jobtest.Program).
var example = jobtest.Program{AsMain: asMainEnv, Bin: runBinEnv}

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runProgram runs the command with env and returns its exit status and
// stderr.
func runProgram(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	prog, extra := example.Command()
	cmd := exec.Command(prog, args...)
	cmd.Env = append(env, extra...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return 0, stderr.String()
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	return ee.ExitCode(), stderr.String()
}

func TestWithoutALauncherItPrintsUsage(t *testing.T) {
	code, stderr := runProgram(t, example.LauncherFree(), "--samples=4096")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no launcher environment")
	assert.Contains(t, stderr, "rayd launch -n 2")
}

func TestALaneSpacePast2to31IsAUsageError(t *testing.T) {
	env := append(example.LauncherFree(), "RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=0")
	code, stderr := runProgram(t, env, "--samples=2147483647")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "lane space of 2147483648")
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"--samples=-1"}, {"--samples=2147483648"}, {"--resolution=0"}, {"--resolution=46341"},
		{"--seed=-1"}, {"--seed=2147483648"}, {"--timeout=0"}, {"--timeout=-1s"}, {"--timeout=soon"}, {"stray"}, {"--nope"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errb), "%v", args)
	}
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errb))
	assert.Contains(t, errb.String(), "-resolution")

	c, err := parseFlags(nil, &errb)
	require.NoError(t, err)
	assert.Equal(t, config{samples: 1 << 20, resolution: 8, seed: 7, timeout: 600 * time.Second, watchdog: true}, c)
	for v, want := range map[string]time.Duration{"600": 600 * time.Second, "600s": 600 * time.Second, "10m": 10 * time.Minute,
		"1.5": 1500 * time.Millisecond} {
		c, err := parseFlags([]string{"--timeout=" + v}, &errb)
		require.NoError(t, err, v)
		assert.Equal(t, want, c.timeout, v)
	}
}

// TestLaneWindows: the recipe's windows (spec §11.3) cover a lane space of
// at least the request, a multiple of 32·W, contiguously, each non-empty,
// every non-last count a multiple of 32.
func TestLaneWindows(t *testing.T) {
	for _, req := range []int{0, 1, 31, 1024, 1 << 20, 100000} {
		for _, world := range []int{1, 2, 3, 8} {
			next := 0
			for r := range world {
				w := laneWindow(req, r, world)
				require.GreaterOrEqual(t, w.total, max(req, 1))
				require.Zero(t, w.total%(32*world), "%d over %d", req, world)
				require.Equal(t, next, w.begin, "%d over %d: rank %d", req, world, r)
				require.Positive(t, w.count)
				if r < world-1 {
					require.Zero(t, w.count%32)
				}
				next = w.begin + w.count
				opt := options(7, w)
				require.Equal(t, w.total, opt.DirectSamples, "every rank passes the global sample count")
				require.Equal(t, []int{w.begin, w.count}, []int{opt.LaneOffset, opt.LaneCount})
				require.Equal(t, int64(7), opt.Seed, "every rank passes the same seed")
			}
			require.Equal(t, laneWindow(req, 0, world).total, next)
		}
	}
	assert.Equal(t, window{0, 1 << 19, 1 << 20}, laneWindow(1<<20, 0, 2))
	assert.Equal(t, window{1 << 19, 1 << 19, 1 << 20}, laneWindow(1<<20, 1, 2))
}

// memGroup is an in-process reducer for world simulated ranks: each rank's
// sum adds its data under the lock, waits for the others and reads back the
// total.
type memGroup struct {
	mu       sync.Mutex
	cond     *sync.Cond
	world    int
	arrived  int
	grids    [][]float64
	counters []int64
}

func newMemGroup(world int) *memGroup {
	g := &memGroup{world: world}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *memGroup) sum(_ context.Context, grids [][]float64, counters []int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.grids == nil {
		g.grids, g.counters = make([][]float64, len(grids)), make([]int64, len(counters))
		for k := range grids {
			g.grids[k] = make([]float64, len(grids[k]))
		}
	}
	for k := range grids {
		for i, v := range grids[k] {
			g.grids[k][i] += v
		}
	}
	for i, v := range counters {
		g.counters[i] += v
	}
	g.arrived++
	g.cond.Broadcast()
	for g.arrived < g.world {
		g.cond.Wait()
	}
	for k := range grids {
		copy(grids[k], g.grids[k])
	}
	copy(counters, g.counters)
	return nil
}

// allClose is numpy's allclose: |got − want| ≤ atol + rtol·|want| everywhere.
func allClose(t *testing.T, want, got []float64, rtol, atol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.LessOrEqual(t, math.Abs(got[i]-want[i]), atol+rtol*math.Abs(want[i]), "%s[%d]: %g vs %g", what, i, got[i], want[i])
	}
}

// comparePartials: counters exactly, grids within rtol/atol.
func comparePartials(t *testing.T, want, got partial, rtol, atol float64, what string) {
	t.Helper()
	assert.Equal(t, want.counters, got.counters, "%s: counters", what)
	for k := range want.grids {
		allClose(t, want.grids[k], got.grids[k], rtol, atol, what+": "+gridNames[k])
	}
}

// TestShardedMatchesTheSingleLaunch runs the recipe's windows on the CPU
// backend as W simulated ranks, reduces them in process and compares the
// merged accumulation with one launch of the whole lane space.
func TestShardedMatchesTheSingleLaunch(t *testing.T) {
	ctx := context.Background()
	cfg := config{samples: 3000, resolution: 8, seed: 7}
	tri, _, _, _ := fixture(cfg.resolution)
	s, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithBackend(rayd.BackendCPU))
	require.NoError(t, err)
	defer s.Close()
	for _, world := range []int{1, 2, 3} {
		total := dist.LaneTotal(cfg.samples, world)
		whole, err := accumulate(ctx, s, cfg, window{0, -1, total})
		require.NoError(t, err)
		assert.Greater(t, sum(whole.grids[0]), 0.0, "the fixture deposits power")
		assert.Equal(t, int64(total), whole.counters[0]+whole.counters[3]+whole.counters[5],
			"every lane is committed or rejected")
		assert.Positive(t, whole.counters[0])

		group := newMemGroup(world)
		merged := make([]partial, world)
		errs := make([]error, world)
		locals := make([]partial, world)
		var wg sync.WaitGroup
		for r := range world {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if locals[r], errs[r] = accumulate(ctx, s, cfg, laneWindow(cfg.samples, r, world)); errs[r] == nil {
					merged[r], errs[r] = reduce(ctx, group, locals[r])
				}
			}()
		}
		wg.Wait()
		localPower := 0.0
		for r := range world {
			require.NoError(t, errs[r])
			assert.Equal(t, merged[0], merged[r], "every rank holds the same merged grids")
			localPower += sum(locals[r].grids[0])
			if world > 1 {
				assert.Less(t, locals[r].counters[0], whole.counters[0], "rank %d ran only its window", r)
			}
		}
		comparePartials(t, whole, merged[0], 1e-12, 1e-15, fmt.Sprintf("world %d", world))
		assert.InDelta(t, sum(merged[0].grids[0]), localPower, 1e-12*localPower)
	}
}

// readOutput reads a file written by writeOutput.
func readOutput(t *testing.T, path string) *output {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var o output
	require.NoError(t, json.Unmarshal(b, &o), path)
	return &o
}

// toPartial rebuilds the merged accumulation from the output file.
func (o *output) toPartial() partial {
	p := partial{res: o.Resolution}
	for k, g := range o.grids() {
		for _, row := range *g {
			p.grids[k] = append(p.grids[k], row...)
		}
	}
	for k, c := range o.counters() {
		p.counters[k] = *c
	}
	return p
}

func TestOutputFile(t *testing.T) {
	ctx := context.Background()
	cfg := config{samples: 1000, resolution: 3, seed: 11}
	tri, _, _, _ := fixture(cfg.resolution)
	s, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithBackend(rayd.BackendCPU))
	require.NoError(t, err)
	defer s.Close()
	w := laneWindow(cfg.samples, 0, 2)
	p, err := accumulate(ctx, s, cfg, window{0, -1, w.total})
	require.NoError(t, err)

	path := filepath.Join(t.TempDir(), "grids.json")
	require.NoError(t, writeOutput(path, newOutput(p, cfg, w.total, 2)))
	o := readOutput(t, path)
	assert.Equal(t, 1024, o.TotalSamples)
	assert.Equal(t, 1000, o.RequestedSamples)
	assert.Equal(t, 2, o.WorldSize)
	assert.Equal(t, int64(11), o.Seed)
	assert.Equal(t, 3, o.Resolution)
	assert.Equal(t, 1.0, o.Wavelength)
	for k, g := range o.grids() {
		require.Len(t, *g, 3, gridNames[k])
		for _, row := range *g {
			require.Len(t, row, 3, gridNames[k])
		}
	}
	assert.Equal(t, p, o.toPartial(), "the file holds the accumulation exactly")
	assert.Equal(t, sum(p.grids[0]), o.PowerSum)
	assert.Equal(t, p.checksum(), o.GridChecksum)

	var raw map[string]json.RawMessage
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &raw))
	for _, name := range append(gridNames[:], counterNames[:]...) {
		assert.Contains(t, raw, name)
	}
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".accum_grids-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file is left behind")

	assert.Error(t, writeOutput(filepath.Join(t.TempDir(), "missing", "grids.json"), newOutput(p, cfg, w.total, 2)))
}
