package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/rayd-go/rayd/ptx"
)

// nvccJob is one nvcc run: the PTX of module mod (arch "") or its cubin
// for arch.
type nvccJob struct {
	mod  int
	arch string
}

// parseArchs reads -archs: comma-separated sm_XX, or "none".
func parseArchs(s string) ([]string, error) {
	out := []string{}
	if strings.TrimSpace(s) == "none" {
		return out, nil
	}
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if n, specific, ok := ptx.ParseArch(a); !ok || specific || n == 0 {
			return nil, fmt.Errorf("%w: -archs: %q is not an architecture (sm_XX)", errUsage, a)
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// build runs nvcc for every module (or o.only): the PTX, and one cubin per
// architecture for every CUDA module, then updates the manifest. A full
// build sets the manifest's cubin_archs to -archs; a one-module build keeps
// them (so that every module keeps cubins for the same architectures).
func build(o *options) error {
	archs, err := parseArchs(o.archs)
	if err != nil {
		return err
	}
	out, err := exec.Command(o.nvcc, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v", o.nvcc, err)
	}
	release := ptx.NVCCRelease(string(out))
	m, err := readManifest(o.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if m == nil {
		m = &ptx.Manifest{SchemaVersion: ptx.SchemaVersion, CubinArchs: []string{}}
	}
	switch {
	case o.only == "":
		m.CubinArchs = archs
	case o.archsSet && !slices.Equal(archs, m.CubinArchs):
		return fmt.Errorf("%w: -module %s keeps the manifest's cubin_archs %v; -archs %v needs a full build", errUsage, o.only, m.CubinArchs, archs)
	}
	for _, src := range unlistedSources(o.dir, m) {
		stem := strings.TrimSuffix(filepath.Base(src), ".cu")
		if o.only != "" && stem != o.only {
			continue
		}
		m.Modules = append(m.Modules, ptx.ModuleRecord{Name: stem, File: stem + ".ptx", Source: src})
	}
	built := map[string]bool{}
	var jobs []nvccJob
	for i := range m.Modules {
		rec := &m.Modules[i]
		if o.only != "" && rec.Name != o.only {
			continue
		}
		built[rec.Name] = true
		if len(rec.Flags) == 0 {
			rec.Flags = append([]string(nil), ptx.DefaultFlags...)
		}
		if rec.Loader, err = loaderOf(o.dir, rec.Source); err != nil {
			return err
		}
		jobs = append(jobs, nvccJob{mod: i})
		rec.Cubins = []ptx.CubinRecord{}
		if rec.Loader == ptx.LoaderCUDA {
			for _, a := range m.CubinArchs {
				jobs = append(jobs, nvccJob{mod: i, arch: a})
				rec.Cubins = append(rec.Cubins, ptx.CubinRecord{Arch: a, File: ptx.CubinFile(rec.Name, a),
					NVCC: release, Flags: ptx.CubinFlags(rec.Flags, a), Target: a})
			}
		}
		rec.NVCC = release
	}
	if o.only != "" && len(built) == 0 {
		return fmt.Errorf("%w: no module %q (and no src/%s.cu)", errUsage, o.only, o.only)
	}
	if err := runJobs(o, m, jobs); err != nil {
		return err
	}
	for i := range m.Modules {
		rec := &m.Modules[i]
		if !built[rec.Name] {
			continue
		}
		img, err := os.ReadFile(filepath.Join(o.dir, rec.File))
		if err != nil {
			return err
		}
		for j := range rec.Cubins {
			rec.Cubins[j].PTXSHA256 = ptx.SHA256Hex(img)
		}
		if err := removeStaleCubins(o.dir, *rec); err != nil {
			return err
		}
	}
	return update(o.dir, "", m, built)
}

// loaderOf is the loader of the module compiled from source.
func loaderOf(dir, source string) (string, error) {
	srcs, err := ptx.SourceClosure(dir, source)
	if err != nil {
		return "", err
	}
	for _, s := range srcs {
		if filepath.Base(s) == ptx.OptiXHeader {
			return ptx.LoaderOptiX, nil
		}
	}
	return ptx.LoaderCUDA, nil
}

// runJobs runs the nvcc jobs, o.jobs at a time, and returns the first
// failure. Cubins are compiled into a temporary directory and stored
// compressed under the ptx directory.
func runJobs(o *options, m *ptx.Manifest, jobs []nvccJob) error {
	tmp, err := os.MkdirTemp("", "ptxdigest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(o.dir, ptx.CubinDir), 0o755); err != nil {
		return err
	}
	sem := make(chan struct{}, max(o.jobs, 1))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for k, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[k] = runJob(o, tmp, &m.Modules[j.mod], j.arch)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runJob compiles rec's PTX (arch "") or its cubin for arch.
func runJob(o *options, tmp string, rec *ptx.ModuleRecord, arch string) error {
	flags, target := rec.Flags, rec.File
	if arch != "" {
		flags, target = ptx.CubinFlags(rec.Flags, arch), filepath.Join(tmp, rec.Name+"."+arch+".cubin")
	}
	args := append(append([]string(nil), flags...), "-o", target, rec.Source)
	cmd := exec.Command(o.nvcc, args...)
	cmd.Dir = o.dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nvcc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	if arch == "" {
		fmt.Printf("ptxdigest: built %s from %s\n", rec.File, rec.Source)
		return nil
	}
	img, err := os.ReadFile(target)
	if err != nil {
		return err
	}
	gz, err := ptx.CompressCubin(img)
	if err != nil {
		return err
	}
	file := ptx.CubinFile(rec.Name, arch)
	if err := os.WriteFile(filepath.Join(o.dir, filepath.FromSlash(file)), gz, 0o644); err != nil {
		return err
	}
	fmt.Printf("ptxdigest: built %s from %s (%d bytes, %d stored)\n", file, rec.Source, len(img), len(gz))
	return nil
}

// removeStaleCubins deletes the cubin files of rec that it no longer
// records (an architecture dropped, or a module turned OptiX).
func removeStaleCubins(dir string, rec ptx.ModuleRecord) error {
	files, err := filepath.Glob(filepath.Join(dir, ptx.CubinDir, rec.Name+".sm_*.cubin.gz"))
	if err != nil {
		return err
	}
	for _, f := range files {
		rel := ptx.CubinDir + "/" + filepath.Base(f)
		if !slices.ContainsFunc(rec.Cubins, func(c ptx.CubinRecord) bool { return c.File == rel }) {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}
