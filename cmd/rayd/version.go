package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rayd-go/rayd/internal/buildinfo"
)

// module is rayd-go's module path.
const module = "github.com/rayd-go/rayd"

// versionReport is what `rayd version -json` prints.
type versionReport struct {
	Module string `json:"module"`
	buildinfo.Stamp
}

// cmdVersion prints the build stamp: the module version, the commit the
// binary was built from (and where that came from), the dirty flag and the
// Go version.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	f := newFlags("version", "rayd version [-json]", `
Prints what this binary was built from: the module version ("(devel)" for
a local build), the commit and whether the tree had uncommitted changes
(from the Makefile's link-time stamp, or the Go toolchain's VCS stamp of a
go build or go install inside a checkout; "unknown" without either), and
the Go version. Benchmark records carry the same commit.`)
	asJSON := f.Bool("json", false, "print the stamp as JSON")
	if code, done := f.parse(args, stdout, stderr); done {
		return code
	}
	if f.NArg() > 0 {
		return usageError(stderr, "version", "unexpected argument %q", f.Arg(0))
	}
	s := buildinfo.Get()
	if *asJSON {
		return writeJSON(stdout, stderr, "version", versionReport{Module: module, Stamp: s})
	}
	mod := s.Module
	if mod == "" {
		mod = "(unknown)"
	}
	fmt.Fprintf(stdout, "rayd %s %s\n", module, mod)
	fmt.Fprintf(stdout, "commit  %s (source: %s)\n", s.Commit, s.Source)
	fmt.Fprintf(stdout, "dirty   %v\n", s.Dirty)
	fmt.Fprintf(stdout, "go      %s\n", s.GoVersion)
	return exitOK
}

// writeJSON prints v as indented JSON on stdout.
func writeJSON(stdout, stderr io.Writer, cmd string, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return failure(stderr, cmd, err)
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
		return failure(stderr, cmd, err)
	}
	return exitOK
}
