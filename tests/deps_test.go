package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// library lists the packages a Go program imports to use rayd-go: the
// public package and every package below it.
var library = []string{".", "./geom", "./ref", "./rf", "./edge", "./shard", "./calibrate", "./accel",
	"./launch", "./driver", "./ptx", "./replica", "./dist"}

// cliOnly are the import paths (prefixes) that belong in commands and
// benchmarks only: terminal handling, progress bars, plotting.
var cliOnly = []string{
	"github.com/schollz/progressbar",
	"github.com/mitchellh/colorstring",
	"github.com/rivo/uniseg",
	"golang.org/x/term",
	"gonum.org/",
}

// The library's import closure holds no CLI packages: importing rayd-go
// does not pull in a progress bar, a terminal package or a plotting
// library (calibrate reports progress through a callback; plots live in
// the benchmarks and the command).
func TestLibraryImportClosureHasNoCLIPackages(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not installed: cannot list the import closure")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range library {
		cmd := exec.Command(goTool, "list", "-deps", pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %d packages: the listing is broken", pkg, len(deps))
		}
		for _, d := range deps {
			for _, bad := range cliOnly {
				if strings.HasPrefix(d, bad) {
					t.Errorf("%s imports %s (a command-line package) through its closure", pkg, d)
				}
			}
		}
	}
}
