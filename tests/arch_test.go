// Package tests holds repository-wide checks: the package graph of
// ARCHITECTURE.md (an explicit table of import edges) and the single
// foreign-function boundary.
package tests

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rayd-go/rayd"

// allowed is the package graph of ARCHITECTURE.md as an explicit table:
// for every library package, the rayd-go packages its non-test files may
// import. An edge that is not listed fails TestImportsFollowTheGraph, and
// so does a library package that is not listed, so a new package or a new
// arrow has to be added here (and to ARCHITECTURE.md) on purpose.
var allowed = map[string][]string{
	"driver":               {},
	"ptx":                  {"ptx/src"},
	"ptx/src":              {},
	"geom":                 {},
	"internal/buildinfo":   {},
	"internal/par":         {},
	"launch":               {"driver", "ptx"},
	"ref":                  {"geom", "internal/par"},
	"rf":                   {"geom"},
	"edge":                 {"geom", "internal/par"},
	"internal/workload":    {"geom"},
	"accel":                {"launch", "geom", "edge", "rf"},
	"shard":                {"geom", "edge", "rf"},
	"calibrate":            {"geom"},
	"dist":                 {"driver", "launch"},
	"replica":              {"accel", "launch", "geom", "rf", "shard", "edge"},
	"internal/simdev":      {"geom", "ref", "rf", "shard", "edge"},
	"internal/engine":      {"calibrate", "edge", "geom", "launch", "rf", "shard"},
	"internal/engine/cpu":  {"internal/engine", "edge", "geom", "launch", "ref", "rf", "shard"},
	"internal/engine/cuda": {"internal/engine", "accel", "edge", "geom", "launch", "rf", "shard"},
	"internal/engine/replicated": {"internal/engine", "internal/engine/cuda", "accel", "calibrate", "edge", "geom",
		"launch", "replica", "rf", "shard"},
	".": {"internal/engine", "internal/engine/cpu", "internal/engine/cuda", "internal/engine/replicated",
		"calibrate", "edge", "geom", "launch", "rf", "shard"},
}

// rootForbidden are the packages the public API never imports: the FFI,
// the kernels, the CUDA replicas and the reference sit behind the engines.
var rootForbidden = []string{"driver", "accel", "replica", "ref"}

// isApp reports whether a package is an application of the library
// (commands, tests, benchmarks, examples, tools and test helpers): those may
// import anything.
func isApp(rel string) bool {
	if _, lib := allowed[rel]; lib {
		return false
	}
	for _, p := range []string{"cmd/", "tests", "benchmarks", "examples", "internal/tools", "internal/testscene",
		"internal/gputest", "internal/gpumark", "internal/jobtest", "internal/benchhead", "internal/evidence"} {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

// pureGo lists packages that must not reach the GPU stack at all.
var pureGo = map[string]bool{"ptx/src": true, "edge": true, "rf": true, "shard": true, "calibrate": true, "geom": true, "ref": true, "ptx": true, "internal/workload": true}

// imports maps each package directory (relative to the root) to its imports.
func imports(t *testing.T) map[string]map[string][]string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if out[rel] == nil {
			out[rel] = map[string][]string{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			out[rel][p] = append(out[rel][p], filepath.Base(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOnlyDriverCrossesTheFFIBoundary(t *testing.T) {
	for pkg, ims := range imports(t) {
		if pkg == "driver" {
			continue
		}
		for _, bad := range []string{"unsafe", "github.com/ebitengine/purego", "C"} {
			if files, ok := ims[bad]; ok {
				t.Errorf("%s imports %q (in %s): only driver/ may", pkg, bad, strings.Join(files, ", "))
			}
		}
	}
}

func TestImportsFollowTheGraph(t *testing.T) {
	all := imports(t)
	pkgs := make([]string, 0, len(all))
	for p := range all {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		ok, lib := allowed[pkg]
		if !lib && !isApp(pkg) {
			t.Errorf("package %s has no place in the graph: add it to allowed in tests/arch_test.go and to ARCHITECTURE.md", pkg)
			continue
		}
		for im, files := range all[pkg] {
			if !strings.HasPrefix(im, module) {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(im, module), "/")
			if dep == "" {
				dep = "."
			}
			if pureGo[pkg] && (dep == "driver" || dep == "launch" || dep == "accel") {
				t.Errorf("%s must stay pure Go but imports %s", pkg, dep)
			}
			if !lib || dep == pkg {
				continue
			}
			if testOnly(files) {
				continue // tests may reach below their package (fault injection, references)
			}
			if pkg == "." && slices.Contains(rootForbidden, dep) {
				t.Errorf("the public API imports %s (in %s): it must reach it through an engine", dep, strings.Join(files, ", "))
				continue
			}
			if !slices.Contains(ok, dep) {
				t.Errorf("%s imports %s in %s: not an arrow of the graph (tests/arch_test.go allowed)", pkg, dep, strings.Join(files, ", "))
			}
		}
	}
}

// testOnly reports whether every importing file is a _test.go file.
func testOnly(files []string) bool {
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return false
		}
	}
	return true
}

func TestLayeringTableCoversTheTree(t *testing.T) {
	if _, err := os.Stat("../go.mod"); err != nil {
		t.Fatalf("run from the tests directory: %v", err)
	}
	if len(imports(t)) < 4 {
		t.Fatal("found too few packages: the walk is broken")
	}
}
