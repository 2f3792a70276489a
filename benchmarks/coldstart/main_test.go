package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
)

// TestMain lets the GPU test re-execute this test binary as a child, as the
// command re-executes itself.
func TestMain(m *testing.M) {
	if kind := os.Getenv(childEnv); kind != "" {
		if err := childMain(context.Background(), kind, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "coldstart child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testOptions() options {
	return options{work: workloadConfig{Triangles: 3674, Edge: 0.05, Rays: 1 << 12}, samples: 1, modes: []string{modeCubin}, target: 50}
}

func TestOptionsAreValidatedFirst(t *testing.T) {
	assert.NoError(t, testOptions().validate())
	bad := testOptions()
	bad.samples, bad.work.Rays, bad.modes = 0, 0, []string{"cubin", "fast"}
	err := bad.validate()
	require.Error(t, err)
	for _, want := range []string{"-n 0", "-rays 0", `unknown mode "fast"`} {
		assert.Contains(t, err.Error(), want)
	}
	// A bad request is refused before any device is looked at.
	err = run(context.Background(), bad, &bytes.Buffer{})
	assert.ErrorContains(t, err, "-n 0")
}

// Without a GPU (no driver, no device, or not the one asked for) the
// command says why and measures nothing; the device count is simulated so
// that the refusal is checked on every machine.
func TestRunWithoutAGPUSaysWhy(t *testing.T) {
	real := deviceCount
	t.Cleanup(func() { deviceCount = real })
	for name, c := range map[string]struct {
		n    int
		err  error
		want string
	}{
		"no driver": {0, errors.New("libcuda.so.1: not found"), "the CUDA driver is unavailable"},
		"no device": {0, nil, "no CUDA device visible"},
	} {
		deviceCount = func() (int, error) { return c.n, c.err }
		var out bytes.Buffer
		o := testOptions()
		o.out = filepath.Join(t.TempDir(), "coldstart.json")
		err := run(context.Background(), o, &out)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "no GPU to measure", name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.NoFileExists(t, o.out, name)
		assert.Empty(t, out.String(), name)
	}
	deviceCount = func() (int, error) { return 1, nil }
	o := testOptions()
	o.work.Device = 3
	err := run(context.Background(), o, &bytes.Buffer{})
	assert.ErrorContains(t, err, "device 3 is not visible (1 devices)")
}

func TestChildEnvironmentIsTheMode(t *testing.T) {
	m, ok := modeByName(modeJIT)
	require.True(t, ok)
	env := childEnviron([]string{"PATH=/bin", launch.EnvPTXJIT + "=0", "CUDA_CACHE_PATH=/elsewhere", "HOME=/h"}, m, kindFirst, `{"rays":1}`)
	assert.ElementsMatch(t, []string{"PATH=/bin", "HOME=/h", launch.EnvPTXJIT + "=1", "CUDA_CACHE_DISABLE=1",
		childEnv + "=" + kindFirst, configEnv + `={"rays":1}`}, env)
	for _, name := range modeOrder {
		m, ok := modeByName(name)
		require.True(t, ok, name)
		assert.Equal(t, name != modeCubin, m.Env[launch.EnvPTXJIT] == "1", name)
	}
}

// sampleChildren is what two samples of one mode could report.
func sampleChildren() []childResult {
	load := func(name string, img launch.ImageKind, verify, ld time.Duration) launch.ModuleLoad {
		return launch.ModuleLoad{Module: name, Image: img, Arch: "sm_90", Device: "sm_90", Bytes: 1000, Verify: verify, Load: ld}
	}
	var out []childResult
	for i, f := range []float64{1, 2} {
		out = append(out,
			childResult{Kind: kindSplit, DriverInit: 100 * f, Context: 200 * f, Open: 3 * f, BVHBuild: 4 * f, BVHBuildWarm: f,
				Modules: []launch.ModuleLoad{load("bvh_build", launch.ImageCubin, time.Millisecond, time.Duration(i+1)*time.Millisecond),
					load("trace", launch.ImageCubin, time.Millisecond, 3*time.Millisecond)}},
			childResult{Kind: kindFirst, DriverInit: 110 * f, Context: 210 * f, Backend: "cuda", Hits: 42, NewScene: 10 * f, Intersect: 5 * f,
				NewSceneLoads:  []launch.ModuleLoad{load("bvh_build", launch.ImageCubin, time.Millisecond, time.Millisecond)},
				IntersectLoads: []launch.ModuleLoad{load("trace", launch.ImageCubin, time.Millisecond, 2*time.Millisecond)}})
	}
	return out
}

func TestSummarizeFoldsTheSamples(t *testing.T) {
	m, _ := modeByName(modeCubin)
	r := summarize(m, sampleChildren(), 20)
	assert.Equal(t, []float64{100, 110, 200, 220}, r.DriverInit.Rounds)
	assert.Equal(t, 100.0, r.DriverInit.Min)
	assert.Equal(t, []float64{3, 6}, r.Open.Rounds)
	require.Len(t, r.Modules, 2)
	assert.Equal(t, "bvh_build", r.Modules[0].Module)
	assert.Equal(t, []string{"cubin sm_90", "cubin sm_90"}, r.Modules[0].Images)
	assert.Equal(t, []float64{2, 3}, r.Modules[0].Total.Rounds)
	assert.Equal(t, []float64{6, 7}, r.ModulesTotal.Rounds)
	assert.Equal(t, []float64{15, 30}, r.First.Total.Rounds)
	assert.Equal(t, []float64{5, 5}, r.First.ModuleLoads.Rounds)
	assert.Equal(t, []string{"bvh_build (cubin sm_90)", "bvh_build (cubin sm_90)"}, r.First.NewSceneModules)
	assert.Equal(t, "cuda", r.First.Backend)
	assert.False(t, r.First.MeetsTarget, "median 30 ms against a 20 ms target")
	assert.True(t, summarize(m, sampleChildren(), 30).First.MeetsTarget)

	rep := &report{Workload: testOptions().work, Samples: 2, TargetMS: 20, Modes: []modeReport{r}}
	rep.Device.Name = "NVIDIA H200"
	rep.Verdicts = verdicts(rep)
	require.Len(t, rep.Verdicts, 1)
	assert.Contains(t, rep.Verdicts[0], "cubin: first NewScene + Intersect (cuda, 3674 triangles, 4096 rays)")
	assert.Contains(t, rep.Verdicts[0], "median 30.0 ms, min 15.0 ms (target ≤ 20 ms: not met)")
	var table bytes.Buffer
	printTable(&table, rep)
	assert.Contains(t, table.String(), "cold start on NVIDIA H200, 2 samples per mode")
	assert.Contains(t, table.String(), "module trace [cubin sm_90]")
}

// On a GPU: the first NewScene loads only the BVH build module and the
// first Intersect only the trace module (nothing else of the eleven), each
// from the device's cubin where one is embedded.
func TestFirstSceneLoadsOnlyWhatItUses(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	res := &childResult{}
	require.NoError(t, measureFirst(context.Background(), res, testOptions().work))
	assert.Positive(t, res.Hits)
	m, err := ptx.EmbeddedManifest()
	require.NoError(t, err)
	names := func(ls []launch.ModuleLoad) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Module)
			rec, err := m.Module(l.Module)
			require.NoError(t, err)
			_, hasCubin := rec.Cubin(l.Device)
			want := launch.ImagePTX
			if hasCubin && !launch.PTXJITForced() {
				want = launch.ImageCubin
			}
			assert.Equal(t, want, l.Image, l.Module)
		}
		return out
	}
	switch res.Backend {
	case "cuda":
		assert.Equal(t, []string{"bvh_build"}, names(res.NewSceneLoads))
		assert.Equal(t, []string{"trace"}, names(res.IntersectLoads))
	case "optix": // OptiX programs are compiled by the OptiX context, not loaded as CUDA modules
		assert.Empty(t, names(res.NewSceneLoads))
		assert.Empty(t, names(res.IntersectLoads))
	default:
		t.Fatalf("backend %q", res.Backend)
	}
}

// On a GPU: one sample of the cubin mode, in fresh child processes, makes
// a complete report with the evidence head.
func TestRunWritesTheReport(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	o := testOptions()
	o.out = filepath.Join(t.TempDir(), "coldstart.json")
	var table bytes.Buffer
	require.NoError(t, run(context.Background(), o, &table))
	b, err := os.ReadFile(o.out)
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.NotEmpty(t, rep.Commit)
	assert.NotEmpty(t, rep.PTX)
	require.Len(t, rep.Modes, 1)
	mr := rep.Modes[0]
	assert.Equal(t, modeCubin, mr.Mode)
	require.Len(t, mr.Children, 2)
	assert.Positive(t, mr.DriverInit.Median)
	assert.Positive(t, mr.Context.Median)
	assert.Positive(t, mr.BVHBuild.Median)
	assert.Positive(t, mr.First.Total.Median)
	m, err := ptx.EmbeddedManifest()
	require.NoError(t, err)
	var want []string
	for _, rec := range m.Modules {
		if rec.Loader == ptx.LoaderCUDA {
			want = append(want, rec.Name)
		}
	}
	var got []string
	for _, mod := range mr.Modules {
		got = append(got, mod.Module)
	}
	assert.Equal(t, want, got)
	assert.True(t, slices.ContainsFunc(rep.Verdicts, func(v string) bool { return strings.HasPrefix(v, "cubin: ") }))
	assert.Contains(t, table.String(), "first NewScene + Intersect")
}
