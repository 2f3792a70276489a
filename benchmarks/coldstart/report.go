package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/launch"
)

// report is benchmarks/results/coldstart-<gpu>.json.
type report struct {
	benchhead.Header
	Workload workloadConfig `json:"workload"`
	Samples  int            `json:"samples"`
	// TargetMS is the goal for the first NewScene + Intersect with cubins,
	// driver start and context creation excluded (recorded, not enforced).
	TargetMS float64      `json:"target_ms"`
	Modes    []modeReport `json:"modes"`
	Verdicts []string     `json:"verdicts"`
}

// modeReport summarizes the children of one mode (N of each kind).
type modeReport struct {
	Mode       string            `json:"mode"`
	Env        map[string]string `json:"env"`
	Note       string            `json:"note"`
	DriverInit benchhead.Timing  `json:"driver_init_ms"` // every child of the mode
	Context    benchhead.Timing  `json:"context_ms"`     // every child of the mode
	Open       benchhead.Timing  `json:"open_ms"`
	Modules    []moduleSummary   `json:"modules"`
	// ModulesTotal is the sum over every CUDA module of verify + load.
	ModulesTotal benchhead.Timing `json:"modules_total_ms"`
	BVHBuild     benchhead.Timing `json:"bvh_build_ms"`
	BVHBuildWarm benchhead.Timing `json:"bvh_build_warm_ms"`
	First        firstSummary     `json:"first_scene"`
	Children     []childResult    `json:"children"`
}

// moduleSummary is one module's load over the split children of a mode.
type moduleSummary struct {
	Module     string           `json:"module"`
	Images     []string         `json:"images"` // "cubin sm_90" or "ptx-jit sm_90", per sample
	Reason     string           `json:"reason,omitempty"`
	ImageBytes int              `json:"image_bytes"`
	Verify     benchhead.Timing `json:"verify_ms"`
	Load       benchhead.Timing `json:"load_ms"`
	Total      benchhead.Timing `json:"total_ms"`
}

// firstSummary is the first NewScene + Intersect over the first children
// of a mode: what a user's first call costs once the driver and the context
// are up.
type firstSummary struct {
	Backend   string           `json:"backend"`
	Hits      int              `json:"hits"`
	NewScene  benchhead.Timing `json:"new_scene_ms"`
	Intersect benchhead.Timing `json:"intersect_ms"`
	Total     benchhead.Timing `json:"total_ms"`
	// ModuleLoads is the part of Total spent verifying and loading the
	// modules the two calls loaded (named, per sample, in the lists).
	ModuleLoads      benchhead.Timing `json:"module_loads_ms"`
	NewSceneModules  []string         `json:"new_scene_modules"`
	IntersectModules []string         `json:"intersect_modules"`
	MeetsTarget      bool             `json:"meets_target"`
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// moduleAcc gathers one module's samples.
type moduleAcc struct {
	sum                moduleSummary
	verify, load, both []float64
}

// describeLoads names loads as "module (image arch)".
func describeLoads(ls []launch.ModuleLoad) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%s (%s %s)", l.Module, l.Image, l.Arch)
	}
	return strings.Join(parts, ", ")
}

// summarize folds the children of one mode into its report.
func summarize(m mode, children []childResult, target float64) modeReport {
	r := modeReport{Mode: m.Name, Env: m.Env, Note: m.Note, Children: children}
	var drv, ctx, open, total, build, warm []float64
	var ns, is, ft, fl []float64
	byModule := map[string]*moduleAcc{}
	var order []string
	for _, c := range children {
		drv, ctx = append(drv, c.DriverInit), append(ctx, c.Context)
		switch c.Kind {
		case kindSplit:
			open, build, warm = append(open, c.Open), append(build, c.BVHBuild), append(warm, c.BVHBuildWarm)
			sum := 0.0
			for _, l := range c.Modules {
				e := byModule[l.Module]
				if e == nil {
					e = &moduleAcc{sum: moduleSummary{Module: l.Module, Reason: l.Reason, ImageBytes: l.Bytes}}
					byModule[l.Module] = e
					order = append(order, l.Module)
				}
				e.sum.Images = append(e.sum.Images, fmt.Sprintf("%s %s", l.Image, l.Arch))
				e.verify, e.load = append(e.verify, ms(l.Verify)), append(e.load, ms(l.Load))
				e.both = append(e.both, ms(l.Total()))
				sum += ms(l.Total())
			}
			total = append(total, sum)
		case kindFirst:
			ns, is, ft = append(ns, c.NewScene), append(is, c.Intersect), append(ft, c.NewScene+c.Intersect)
			loads := 0.0
			for _, l := range append(append([]launch.ModuleLoad(nil), c.NewSceneLoads...), c.IntersectLoads...) {
				loads += ms(l.Total())
			}
			fl = append(fl, loads)
			r.First.Backend, r.First.Hits = c.Backend, c.Hits
			r.First.NewSceneModules = append(r.First.NewSceneModules, describeLoads(c.NewSceneLoads))
			r.First.IntersectModules = append(r.First.IntersectModules, describeLoads(c.IntersectLoads))
		}
	}
	r.DriverInit, r.Context, r.Open = timing(drv), timing(ctx), timing(open)
	r.ModulesTotal, r.BVHBuild, r.BVHBuildWarm = timing(total), timing(build), timing(warm)
	for _, name := range order {
		e := byModule[name]
		e.sum.Verify, e.sum.Load, e.sum.Total = timing(e.verify), timing(e.load), timing(e.both)
		r.Modules = append(r.Modules, e.sum)
	}
	r.First.NewScene, r.First.Intersect, r.First.Total, r.First.ModuleLoads = timing(ns), timing(is), timing(ft), timing(fl)
	r.First.MeetsTarget = len(ft) > 0 && r.First.Total.Median <= target
	return r
}

// timing summarizes samples (an empty summary for none).
func timing(v []float64) benchhead.Timing {
	if len(v) == 0 {
		return benchhead.Timing{Rounds: []float64{}}
	}
	return benchhead.Summarize(v)
}

// verdicts states the target for the cubin mode and the figures of the
// others.
func verdicts(r *report) []string {
	var out []string
	for _, m := range r.Modes {
		met := "not met"
		if m.First.MeetsTarget {
			met = "met"
		}
		v := fmt.Sprintf("%s: first NewScene + Intersect (%s, %d triangles, %d rays), driver start and context excluded: median %.1f ms, min %.1f ms",
			m.Mode, m.First.Backend, r.Workload.Triangles, r.Workload.Rays, m.First.Total.Median, m.First.Total.Min)
		if m.Mode == modeCubin {
			v += fmt.Sprintf(" (target ≤ %.0f ms: %s)", r.TargetMS, met)
		}
		out = append(out, v+fmt.Sprintf("; every CUDA module loaded: median %.1f ms", m.ModulesTotal.Median))
	}
	return out
}

// printTable writes the human-readable summary.
func printTable(w io.Writer, r *report) {
	fmt.Fprintf(w, "cold start on %s, %d samples per mode, fresh process per sample (median / min ms)\n", r.Device.Name, r.Samples)
	for _, m := range r.Modes {
		fmt.Fprintf(w, "\n== %s: %s\n", m.Mode, m.Note)
		row := func(name string, t benchhead.Timing) { fmt.Fprintf(w, "  %-34s %9.2f %9.2f\n", name, t.Median, t.Min) }
		row("driver init (cuInit + device get)", m.DriverInit)
		row("context (retain + first current)", m.Context)
		row("launch.Open (context retained)", m.Open)
		for _, mod := range m.Modules {
			img := ""
			if len(mod.Images) > 0 {
				img = mod.Images[0]
			}
			row(fmt.Sprintf("module %s [%s]", mod.Module, img), mod.Total)
		}
		row("every CUDA module", m.ModulesTotal)
		row("BVH build (first in process)", m.BVHBuild)
		row("BVH build (warm)", m.BVHBuildWarm)
		row("first NewScene", m.First.NewScene)
		row("first Intersect", m.First.Intersect)
		row("first NewScene + Intersect", m.First.Total)
		row("  of which module loads", m.First.ModuleLoads)
	}
	fmt.Fprintln(w)
	for _, v := range r.Verdicts {
		fmt.Fprintln(w, v)
	}
}
