// Package tests holds repository-wide checks: the package graph of
// design.md and the single foreign-function boundary.
package tests

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rayd-go/rayd"

// rank orders rayd-go's packages bottom-up (design.md): a package may import
// only packages of strictly lower rank. Packages not listed are a test
// failure, so a new package has to take its place in the graph explicitly.
var rank = map[string]int{
	"driver": 0, "ptx": 0, "ptx/src": 0, "geom": 0, "internal/buildinfo": 0,
	"launch": 1, "ref": 1, "rf": 1, "edge": 1, "internal/workload": 1,
	"accel": 2,
	"shard": 3, "calibrate": 3, "dist": 3,
	"replica":         4,
	"internal/simdev": 4,
	".":               5, // the public API, package rayd
}

// appRank is the rank of commands, tests, benchmarks, examples and internal
// helpers: they may import anything.
const appRank = 9

// pureGo lists packages that must not reach the GPU stack at all.
var pureGo = map[string]bool{"edge": true, "rf": true, "shard": true, "calibrate": true, "geom": true, "ref": true, "ptx": true, "ptx/src": true, "internal/workload": true}

func pkgRank(rel string) (int, bool) {
	if r, ok := rank[rel]; ok {
		return r, true
	}
	for _, p := range []string{"cmd/", "tests", "benchmarks", "examples", "internal/"} {
		if strings.HasPrefix(rel, p) {
			return appRank, true
		}
	}
	return 0, false
}

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

func TestImportsFollowTheLayering(t *testing.T) {
	all := imports(t)
	pkgs := make([]string, 0, len(all))
	for p := range all {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		r, ok := pkgRank(pkg)
		if !ok {
			t.Errorf("package %s has no place in the layering: add it to rank in tests/arch_test.go", pkg)
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
			dr, ok := pkgRank(dep)
			if !ok {
				t.Errorf("%s imports %s, which has no rank", pkg, dep)
				continue
			}
			if testOnly(files) && (dep == pkg || strings.HasPrefix(dep, "internal/")) {
				continue // tests may use their own package and the internal test helpers
			}
			if dr >= r && r != appRank {
				t.Errorf("%s (rank %d) imports %s (rank %d) in %s: lower layers never import upper ones", pkg, r, dep, dr, strings.Join(files, ", "))
			}
			if pureGo[pkg] && (dep == "driver" || dep == "launch" || dep == "accel") {
				t.Errorf("%s must stay pure Go but imports %s", pkg, dep)
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
