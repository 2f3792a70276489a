// Package buildinfo is the one place a rayd-go binary learns which code it
// was built from: the commit and whether the tree was dirty. Evidence files,
// benchmark records and `rayd version` all read it, so a figure can always
// be traced to the source that produced it.
//
// Two sources, in order:
//
//  1. Link-time values, set by the Makefile for every binary it builds
//     (test binaries included, which carry no VCS stamp of their own):
//
//     -ldflags "-X github.com/rayd-go/rayd/internal/buildinfo.commit=<sha>
//     -X github.com/rayd-go/rayd/internal/buildinfo.dirty=true|false"
//
//  2. The Go toolchain's VCS stamp (debug.ReadBuildInfo: vcs.revision,
//     vcs.modified), present in `go build`/`go install` binaries built
//     inside a git checkout.
//
// Without either the commit is "unknown". Place in the package graph: a leaf
// (standard library only); commands, tools and tests import it.
package buildinfo

import (
	"runtime/debug"
	"strconv"
)

// Set with -ldflags -X (see the package comment). Empty means "not set".
var (
	commit string
	dirty  string
)

// Stamp is what a binary knows about its own build.
type Stamp struct {
	// Commit is the full commit hash, or "unknown".
	Commit string `json:"commit"`
	// Dirty reports uncommitted changes in the tree the binary was built
	// from. It is only meaningful when Commit is known.
	Dirty bool `json:"dirty"`
	// Source says where Commit came from: "ldflags", "vcs" or "none".
	Source string `json:"source"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version,omitempty"`
	// Module is the main module's version ("(devel)" for a local build).
	Module string `json:"module_version,omitempty"`
}

// Get returns the binary's stamp.
func Get() Stamp {
	return get(commit, dirty, debug.ReadBuildInfo)
}

func get(c, d string, read func() (*debug.BuildInfo, bool)) Stamp {
	s := Stamp{Commit: "unknown", Source: "none"}
	bi, ok := read()
	if ok && bi != nil {
		s.GoVersion = bi.GoVersion
		s.Module = bi.Main.Version
	}
	if c != "" {
		s.Commit, s.Source = c, "ldflags"
		s.Dirty, _ = strconv.ParseBool(d)
		return s
	}
	if !ok || bi == nil {
		return s
	}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Commit, s.Source = kv.Value, "vcs"
		case "vcs.modified":
			s.Dirty = kv.Value == "true"
		}
	}
	return s
}

// String is "<commit>" or "<commit>+dirty".
func (s Stamp) String() string {
	if s.Dirty {
		return s.Commit + "+dirty"
	}
	return s.Commit
}

// Short is String with the commit cut to 12 characters.
func (s Stamp) Short() string {
	c := s.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if s.Dirty {
		return c + "+dirty"
	}
	return c
}
