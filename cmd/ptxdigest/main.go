// Command ptxdigest keeps ptx/manifest.json honest.
//
//	ptxdigest check   verify every module's PTX, sources and entry layouts (exit 1 on any mismatch)
//	ptxdigest update  recompute digests and layouts after the PTX was regenerated
//	ptxdigest build   run nvcc for every module (every ptx/src/*.cu), then update;
//	                  -module NAME rebuilds one module and keeps the others' records
//
// Flags: -dir (default: the ptx directory of the enclosing module), -nvcc
// (build only; default "nvcc"). CI runs `go run ./cmd/ptxdigest check`.
// `ptxdigest -h` and `ptxdigest <command> -h` print the help and exit 0; a
// usage error exits 2, a failed check or build 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rayd-go/rayd/ptx"
)

// subcommands are ptxdigest's commands and their one-line descriptions.
var subcommands = []struct{ name, summary string }{
	{"check", "verify every module's PTX, sources and entry layouts against ptx/manifest.json"},
	{"update", "recompute the manifest's digests and entry layouts after the PTX was regenerated"},
	{"build", "run nvcc for every module (or -module NAME), then update the manifest"},
}

// errUsage marks a command line that ptxdigest cannot run (exit status 2).
var errUsage = errors.New("usage error")

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

// cli runs a command line and returns the exit status: 0, 1 for a failed
// check or build, 2 for a usage error; help goes to stdout.
func cli(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			usage(stdout)
			return 0
		}
	}
	err := run(args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		usage(stdout)
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "ptxdigest:", err)
		usage(stderr)
		return 2
	}
	fmt.Fprintln(stderr, "ptxdigest:", err)
	return 1
}

// usage prints the commands and the flags.
func usage(w io.Writer) {
	fmt.Fprintln(w, "ptxdigest keeps ptx/manifest.json honest: the committed PTX, its sources and entry layouts.")
	fmt.Fprintln(w, "\nusage: ptxdigest check|update|build [-dir DIR] [-nvcc NVCC] [-module NAME]\n\ncommands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nflags:")
	fs, _, _, _ := newFlagSet("ptxdigest")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintln(w, "\nExit status: 0 success, 1 a failed check or build, 2 usage error.")
}

// newFlagSet is the flag set shared by every command.
func newFlagSet(name string) (fs *flag.FlagSet, dir, nvcc, only *string) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // cli prints the problem and the usage
	dir = fs.String("dir", "", "ptx directory (default: <module root>/ptx)")
	nvcc = fs.String("nvcc", "nvcc", "nvcc to run (build)")
	only = fs.String("module", "", "build only this module (build; default all)")
	return fs, dir, nvcc, only
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command (check, update or build)", errUsage)
	}
	fs, dir, nvcc, only := newFlagSet(args[0])
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	switch args[0] {
	case "check", "update", "build":
	default:
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		*dir = filepath.Join(root, "ptx")
	}
	switch args[0] {
	case "check":
		return check(*dir)
	case "update":
		return update(*dir, "", nil, nil)
	}
	return build(*dir, *nvcc, *only)
}

func readManifest(dir string) (*ptx.Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	return ptx.ParseManifest(b)
}

func check(dir string) error {
	m, err := readManifest(dir)
	if err != nil {
		return err
	}
	probs := ptx.Check(dir, m)
	for _, src := range unlistedSources(dir, m) {
		probs = append(probs, fmt.Sprintf("extra source %s: no module builds it (run make ptx)", src))
	}
	if len(probs) > 0 {
		return fmt.Errorf("%d problem(s):\n  %s", len(probs), strings.Join(probs, "\n  "))
	}
	fmt.Printf("ptxdigest: %d modules verified\n", len(m.Modules))
	return nil
}

// unlistedSources returns src/*.cu files that no module compiles.
func unlistedSources(dir string, m *ptx.Manifest) []string {
	built := map[string]bool{}
	for _, rec := range m.Modules {
		built[rec.Source] = true
	}
	cus, _ := filepath.Glob(filepath.Join(dir, "src", "*.cu"))
	var out []string
	for _, f := range cus {
		rel := "src/" + filepath.Base(f)
		if !built[rel] {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// update recomputes the derived fields of every module m lists (or of the
// manifest read from dir when m is nil), or only of the modules in only when
// it is not nil (a build of some modules must not vouch for the sources of
// the others); nvccRelease, when set, replaces the recorded compiler version.
func update(dir, nvccRelease string, m *ptx.Manifest, only map[string]bool) error {
	if m == nil {
		var err error
		if m, err = readManifest(dir); err != nil {
			return err
		}
	}
	sort.Slice(m.Modules, func(i, j int) bool { return m.Modules[i].Name < m.Modules[j].Name })
	for i := range m.Modules {
		if only != nil && !only[m.Modules[i].Name] {
			continue
		}
		if nvccRelease != "" {
			m.Modules[i].NVCC = nvccRelease
		}
		if err := ptx.Describe(dir, &m.Modules[i]); err != nil {
			return err
		}
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		return err
	}
	fmt.Printf("ptxdigest: manifest updated (%d modules)\n", len(m.Modules))
	return nil
}

func build(dir, nvcc, only string) error {
	out, err := exec.Command(nvcc, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v", nvcc, err)
	}
	release := ptx.NVCCRelease(string(out))
	m, err := readManifest(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if m == nil {
		m = &ptx.Manifest{SchemaVersion: ptx.SchemaVersion}
	}
	for _, src := range unlistedSources(dir, m) {
		stem := strings.TrimSuffix(filepath.Base(src), ".cu")
		if only != "" && stem != only {
			continue
		}
		m.Modules = append(m.Modules, ptx.ModuleRecord{Name: stem, File: stem + ".ptx", Source: src})
	}
	built := map[string]bool{}
	for i, rec := range m.Modules {
		if only != "" && rec.Name != only {
			continue
		}
		built[rec.Name] = true
		flags := rec.Flags
		if len(flags) == 0 {
			flags = ptx.DefaultFlags
		}
		args := append(append([]string(nil), flags...), "-o", rec.File, rec.Source)
		cmd := exec.Command(nvcc, args...)
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("nvcc %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		fmt.Printf("ptxdigest: built %s from %s\n", rec.File, rec.Source)
		m.Modules[i].NVCC = release
	}
	return update(dir, "", m, built)
}

// moduleRoot walks up from the working directory to the directory of go.mod.
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("no go.mod above the working directory; pass -dir")
		}
		d = parent
	}
}
