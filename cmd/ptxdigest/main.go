// Command ptxdigest keeps ptx/manifest.json honest.
//
//	ptxdigest check   verify every module's PTX and cubins, sources and entry layouts (exit 1 on any mismatch)
//	ptxdigest update  recompute digests and layouts after the PTX or cubins were regenerated
//	ptxdigest build   run nvcc for every module (every ptx/src/*.cu): its PTX and, for
//	                  every CUDA (non-OptiX) module, one cubin per architecture of -archs
//	                  (default sm_80,sm_86,sm_89,sm_90), then update;
//	                  -module NAME rebuilds one module (PTX and cubins for the manifest's
//	                  cubin_archs) and keeps the others' records
//
// Flags: -dir (default: the ptx directory of the enclosing module), -nvcc
// (build only; default "nvcc"), -archs (build; "none" builds no cubins),
// -j (build; parallel nvcc runs, default the CPU count). CI runs
// `go run ./cmd/ptxdigest check`. `ptxdigest -h` and `ptxdigest <command>
// -h` print the help and exit 0; a usage error exits 2, a failed check or
// build 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/rayd-go/rayd/ptx"
)

// subcommands are ptxdigest's commands and their one-line descriptions.
var subcommands = []struct{ name, summary string }{
	{"check", "verify every module's PTX and cubins, sources and entry layouts against ptx/manifest.json"},
	{"update", "recompute the manifest's digests and entry layouts after the PTX or cubins were regenerated"},
	{"build", "run nvcc for every module (or -module NAME): PTX and cubins, then update the manifest"},
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
	fmt.Fprintln(w, "\nusage: ptxdigest check|update|build [-dir DIR] [-nvcc NVCC] [-module NAME] [-archs LIST] [-j N]\n\ncommands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nflags:")
	fs, _ := newFlagSet("ptxdigest")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintln(w, "\nExit status: 0 success, 1 a failed check or build, 2 usage error.")
}

// options are the flags of every command.
type options struct {
	dir, nvcc, only, archs string
	jobs                   int
	archsSet               bool // -archs was given
}

// newFlagSet is the flag set shared by every command.
func newFlagSet(name string) (*flag.FlagSet, *options) {
	o := &options{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // cli prints the problem and the usage
	fs.StringVar(&o.dir, "dir", "", "ptx directory (default: <module root>/ptx)")
	fs.StringVar(&o.nvcc, "nvcc", "nvcc", "nvcc to run (build)")
	fs.StringVar(&o.only, "module", "", "build only this module (build; default all)")
	fs.StringVar(&o.archs, "archs", strings.Join(ptx.DefaultCubinArchs, ","),
		"cubin architectures, comma-separated, or none (build; a -module build keeps the manifest's)")
	fs.IntVar(&o.jobs, "j", runtime.NumCPU(), "parallel nvcc runs (build)")
	return fs, o
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command (check, update or build)", errUsage)
	}
	fs, o := newFlagSet(args[0])
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
	fs.Visit(func(f *flag.Flag) { o.archsSet = o.archsSet || f.Name == "archs" })
	if o.dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		o.dir = filepath.Join(root, "ptx")
	}
	switch args[0] {
	case "check":
		return check(o.dir)
	case "update":
		return update(o.dir, "", nil, nil)
	}
	return build(o)
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
	cubins := 0
	for _, rec := range m.Modules {
		cubins += len(rec.Cubins)
	}
	fmt.Printf("ptxdigest: %d modules and %d cubins verified\n", len(m.Modules), cubins)
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
