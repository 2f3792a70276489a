package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/launch"
)

// The modes: how the children load the modules.
const (
	modeCubin     = "cubin"
	modeJIT       = "ptx-jit"
	modeJITCached = "ptx-jit-cached"
)

// modeOrder is the default order of the modes.
var modeOrder = []string{modeCubin, modeJIT, modeJITCached}

// mode is one way of loading the modules: the environment of its children.
type mode struct {
	Name string
	Env  map[string]string
	Note string
}

// modeByName returns the mode name (its JIT cache directory filled in by
// run).
func modeByName(name string) (mode, bool) {
	switch name {
	case modeCubin:
		return mode{Name: name, Env: map[string]string{launch.EnvPTXJIT: "0", "CUDA_CACHE_DISABLE": "1"},
			Note: "the embedded cubin of the device's architecture where there is one, else the PTX without the JIT cache"}, true
	case modeJIT:
		return mode{Name: name, Env: map[string]string{launch.EnvPTXJIT: "1", "CUDA_CACHE_DISABLE": "1"},
			Note: "every module JIT-compiled from its PTX, the driver's JIT cache disabled (a first run ever)"}, true
	case modeJITCached:
		return mode{Name: name, Env: map[string]string{launch.EnvPTXJIT: "1", "CUDA_CACHE_DISABLE": "0"},
			Note: "every module from its PTX through a private JIT cache primed by one unrecorded run (any later run)"}, true
	}
	return mode{}, false
}

// deviceCount is the visible device count (driver.DeviceCount; a test
// replaces it to see the refusal on any machine).
var deviceCount = driver.DeviceCount

// gpuPresent says why there is nothing to measure, if so.
func gpuPresent(ordinal int) error {
	n, err := deviceCount()
	switch {
	case err != nil:
		return fmt.Errorf("no GPU to measure: the CUDA driver is unavailable: %w", err)
	case n == 0:
		return fmt.Errorf("no GPU to measure: no CUDA device visible")
	case ordinal >= n:
		return fmt.Errorf("no GPU to measure: device %d is not visible (%d devices)", ordinal, n)
	}
	return nil
}

// run measures every mode, -n samples of each kind, interleaved sample by
// sample, then writes the report and prints the table on w.
func run(ctx context.Context, o options, w io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := gpuPresent(o.work.Device); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cache, err := os.MkdirTemp("", "rayd-coldstart-jit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)
	var modes []mode
	for _, name := range o.modes {
		m, _ := modeByName(name)
		if name == modeJITCached {
			m.Env["CUDA_CACHE_PATH"] = cache
			if _, err := spawn(ctx, exe, kindSplit, m, o.work); err != nil {
				return fmt.Errorf("priming the JIT cache: %w", err)
			}
		}
		modes = append(modes, m)
	}
	children := make([][]childResult, len(modes))
	for i := range o.samples {
		for k, m := range modes {
			for _, kind := range []string{kindSplit, kindFirst} {
				res, err := spawn(ctx, exe, kind, m, o.work)
				if err != nil {
					return fmt.Errorf("%s %s sample %d: %w", m.Name, kind, i+1, err)
				}
				children[k] = append(children[k], res)
			}
		}
	}
	h, err := benchhead.New(o.work.Device)
	if err != nil {
		return err
	}
	rep := &report{Header: h, Workload: o.work, Samples: o.samples, TargetMS: o.target}
	for k, m := range modes {
		if m.Name == modeJITCached {
			m.Env["CUDA_CACHE_PATH"] = "(a private directory, primed by one unrecorded run)"
		}
		rep.Modes = append(rep.Modes, summarize(m, children[k], o.target))
	}
	rep.Verdicts = verdicts(rep)
	printTable(w, rep)
	if o.out == "" {
		return nil
	}
	return benchhead.WriteJSON(o.out, rep)
}

// spawn runs one child of kind in mode: this executable again, in a fresh
// process, with the mode's environment.
func spawn(ctx context.Context, exe, kind string, m mode, work workloadConfig) (childResult, error) {
	cfg, err := json.Marshal(work)
	if err != nil {
		return childResult{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = childEnviron(os.Environ(), m, kind, string(cfg))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return childResult{}, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res childResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return childResult{}, fmt.Errorf("child output: %w", err)
	}
	if res.Kind != kind {
		return childResult{}, fmt.Errorf("child measured %q, want %q", res.Kind, kind)
	}
	return res, nil
}

// childEnviron is base without the variables the modes set, plus the
// mode's, the child's kind and its workload.
func childEnviron(base []string, m mode, kind, cfg string) []string {
	set := map[string]string{childEnv: kind, configEnv: cfg}
	for k, v := range m.Env {
		set[k] = v
	}
	drop := map[string]bool{launch.EnvPTXJIT: true, "CUDA_CACHE_DISABLE": true, "CUDA_CACHE_PATH": true, childEnv: true, configEnv: true}
	var out []string
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}
