package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
)

// The two kinds of child process, each run fresh for every sample.
const (
	// kindSplit times every module's load and a BVH build, on launch
	// directly.
	kindSplit = "split"
	// kindFirst times the first NewScene and Intersect, as a user's first
	// call pays them.
	kindFirst = "first"
)

// childEnv selects the child's kind; the parent sets it when it
// re-executes itself.
const childEnv = "RAYD_COLDSTART_CHILD"

// workloadConfig is what both kinds measure on.
type workloadConfig struct {
	Device    int     `json:"device"`
	Triangles int     `json:"triangles"`
	Edge      float32 `json:"triangle_half_width"`
	Rays      int     `json:"rays"`
}

// childResult is one child's measurements, in milliseconds.
type childResult struct {
	Kind       string  `json:"kind"`
	ForcedJIT  bool    `json:"ptx_jit_forced"`
	DriverInit float64 `json:"driver_init_ms"` // dlopen libcuda + cuInit + cuDeviceGet
	Context    float64 `json:"context_ms"`     // cuDevicePrimaryCtxRetain + first cuCtxSetCurrent

	// split
	Open         float64             `json:"open_ms,omitempty"` // launch.Open with the context already retained
	Modules      []launch.ModuleLoad `json:"modules,omitempty"` // every CUDA module, manifest order
	BVHBuild     float64             `json:"bvh_build_ms,omitempty"`
	BVHBuildWarm float64             `json:"bvh_build_warm_ms,omitempty"`

	// first
	Backend        string              `json:"backend,omitempty"`
	NewScene       float64             `json:"new_scene_ms,omitempty"`
	Intersect      float64             `json:"intersect_ms,omitempty"`
	NewSceneLoads  []launch.ModuleLoad `json:"new_scene_loads,omitempty"`
	IntersectLoads []launch.ModuleLoad `json:"intersect_loads,omitempty"`
	Hits           int                 `json:"hits,omitempty"`
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// scene is the benchmark's small mesh and ray batch.
func scene(cfg workloadConfig) (geom.Mesh, rayd.Rays) {
	mesh := workload.CloudMesh(cfg.Triangles, cfg.Edge, workload.MeshSeed)
	o, d := workload.VolumeRays(cfg.Rays, workload.VolumeRaySeed)
	return mesh, rayd.Rays{Origins: o, Directions: d}
}

// initDriver times the driver's start (dlopen, cuInit, cuDeviceGet) and the
// primary context (retain, first set current) of device ordinal, on the
// calling goroutine's locked thread. The context stays retained.
func initDriver(res *childResult, ordinal int) (driver.Context, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	if err := driver.Load(); err != nil {
		return driver.Context{}, err
	}
	dev, err := driver.DeviceGet(ordinal)
	if err != nil {
		return driver.Context{}, err
	}
	res.DriverInit = msSince(start)
	start = time.Now()
	ctx, err := driver.PrimaryContext(dev)
	if err != nil {
		return driver.Context{}, err
	}
	if err := ctx.SetCurrent(); err != nil {
		_ = ctx.Release()
		return driver.Context{}, err
	}
	res.Context = msSince(start)
	return ctx, nil
}

// runChild measures one kind in this (fresh) process and writes the result
// as JSON to w.
func runChild(ctx context.Context, kind string, cfg workloadConfig, w io.Writer) error {
	res := &childResult{Kind: kind, ForcedJIT: launch.PTXJITForced()}
	dctx, err := initDriver(res, cfg.Device)
	if err != nil {
		return err
	}
	defer dctx.Release()
	switch kind {
	case kindSplit:
		err = measureSplit(res, cfg)
	case kindFirst:
		err = measureFirst(ctx, res, cfg)
	default:
		err = fmt.Errorf("unknown child kind %q", kind)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(res)
}

// measureSplit loads every CUDA module on a fresh Device, then builds the
// BVH of the mesh twice (the first build in the process, then a warm one).
func measureSplit(res *childResult, cfg workloadConfig) error {
	start := time.Now()
	d, err := launch.Open(cfg.Device)
	if err != nil {
		return err
	}
	defer d.Close()
	res.Open = msSince(start)
	m, err := ptx.EmbeddedManifest()
	if err != nil {
		return err
	}
	for _, rec := range m.Modules {
		if rec.Loader != ptx.LoaderCUDA {
			continue
		}
		l, err := d.LoadModule(rec.Name)
		if err != nil {
			return err
		}
		res.Modules = append(res.Modules, l)
	}
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	mesh, _ := scene(cfg)
	t, err := geom.BuildTables([]geom.Mesh{mesh})
	if err != nil {
		return err
	}
	for _, dst := range []*float64{&res.BVHBuild, &res.BVHBuildWarm} {
		start := time.Now()
		b, err := accel.Build(s, t)
		if err != nil {
			return err
		}
		*dst = msSince(start)
		if err := b.Close(); err != nil {
			return err
		}
	}
	return nil
}

// measureFirst times the first NewScene (default backend on the device)
// and its first Intersect, and records which modules each loaded.
func measureFirst(ctx context.Context, res *childResult, cfg workloadConfig) error {
	mesh, rays := scene(cfg)
	seq := launch.ModuleLoadSeq()
	start := time.Now()
	s, err := rayd.NewScene(ctx, []rayd.Mesh{mesh}, rayd.WithDevice(cfg.Device))
	if err != nil {
		return err
	}
	defer s.Close()
	res.NewScene = msSince(start)
	res.NewSceneLoads = launch.ModuleLoadsSince(seq)
	seq = launch.ModuleLoadSeq()
	start = time.Now()
	hits, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	if err != nil {
		return err
	}
	res.Intersect = msSince(start)
	res.IntersectLoads = launch.ModuleLoadsSince(seq)
	res.Backend = string(s.Backend())
	if s.Backend() == rayd.BackendCPU {
		return fmt.Errorf("the scene fell back to the CPU reference: nothing on the GPU to time")
	}
	for _, t := range hits.T {
		if !math.IsInf(float64(t), 1) {
			res.Hits++
		}
	}
	return nil
}
