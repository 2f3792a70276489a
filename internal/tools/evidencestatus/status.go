package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rayd-go/rayd/ptx"
)

// headPTX is HEAD's PTX manifest: module digests and the manifest's own.
type headPTX struct {
	modules  map[string]string
	manifest string
}

func parseHeadPTX(b []byte) (headPTX, error) {
	m, err := ptx.ParseManifest(b)
	if err != nil {
		return headPTX{}, err
	}
	h := headPTX{modules: map[string]string{}, manifest: ptx.SHA256Hex(b)}
	for _, mod := range m.Modules {
		h.modules[mod.Name] = mod.SHA256
	}
	return h, nil
}

// status is the verdict on one evidence file.
type status struct {
	path       string
	current    bool
	imported   bool
	experiment bool
	lines      []string // commit, GPU-code commits since, PTX, missing fields
}

// key is what groups files into one printed entry: everything but the path.
func (s status) key() string { return fmt.Sprint(s.current, s.imported, s.experiment, s.lines) }

// isExperiment reports whether rel lies in an experiments/ folder: the
// measurements of branch commits kept beside the evidence for the design
// decision each records. They are reported with their commit and PTX, but
// never as evidence of HEAD, and -strict does not fail on them.
func isExperiment(rel string) bool {
	return strings.Contains("/"+filepath.ToSlash(rel), "/experiments/")
}

const maxListed = 6

// judge builds the status of one record against the history and HEAD's
// PTX manifest.
func judge(r *record, g *repo, head headPTX) status {
	s := status{path: r.Path}
	add := func(format string, args ...any) { s.lines = append(s.lines, fmt.Sprintf(format, args...)) }
	if r.Imported {
		s.imported = true
		add("imported figures (transcribed from documents, not measured by this code): no build to compare")
		return s
	}
	if isExperiment(r.Path) {
		s.experiment = true
		add("experiment record: a measurement of the commit it names, kept for the decision it records; not evidence of HEAD")
	}
	fresh := true
	switch {
	case r.Commit == "":
		add("no commit recorded")
		fresh = false
	default:
		paths, what := g.pathsFor(r.Path)
		h := g.gpuCommitsSince(r.Commit, paths)
		short := r.Commit
		if len(short) > 12 {
			short = short[:12]
		}
		dirty := ""
		if r.Dirty != nil && *r.Dirty {
			dirty, fresh = " (built from a dirty tree)", false
		}
		switch {
		case h.unavailable != "":
			add("commit %s%s: %s", short, dirty, h.unavailable)
			fresh = false
		case len(h.commits) == 0:
			add("commit %s%s: no %s commits since", short, dirty, what)
		default:
			list := h.commits
			more := ""
			if len(list) > maxListed {
				list, more = list[:maxListed], fmt.Sprintf(" and %d more", len(h.commits)-maxListed)
			}
			add("commit %s%s: %d %s commit(s) since: %s%s", short, dirty, len(h.commits), what, strings.Join(list, " "), more)
			fresh = false
		}
	}
	if r.Text {
		add("text: no PTX digests recorded")
		fresh = false
	} else {
		line, same := comparePTX(r, head)
		add("PTX: %s", line)
		fresh = fresh && same
	}
	if l := r.lacks(); len(l) > 0 {
		add("lacks: %s (written before the evidence head existed)", strings.Join(l, ", "))
		fresh = false
	}
	s.current = fresh && !s.experiment
	return s
}

// comparePTX compares the recorded PTX digests with HEAD's manifest.
func comparePTX(r *record, head headPTX) (string, bool) {
	switch {
	case r.PTX != nil:
		var differ, absent []string
		for name, d := range head.modules {
			got, ok := r.PTX[name]
			switch {
			case !ok:
				absent = append(absent, name)
			case got != d:
				differ = append(differ, name)
			}
		}
		var gone []string
		for name := range r.PTX {
			if _, ok := head.modules[name]; !ok {
				gone = append(gone, name)
			}
		}
		sort.Strings(differ)
		sort.Strings(absent)
		sort.Strings(gone)
		var parts []string
		if len(differ) > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d modules differ from HEAD's (%s)", len(differ), len(head.modules), strings.Join(differ, ", ")))
		}
		if len(absent) > 0 {
			parts = append(parts, "not recorded: "+strings.Join(absent, ", "))
		}
		if len(gone) > 0 {
			parts = append(parts, "no longer at HEAD: "+strings.Join(gone, ", "))
		}
		if r.Manifest != "" && r.Manifest != head.manifest {
			parts = append(parts, "manifest digest differs")
		}
		if len(parts) == 0 {
			return fmt.Sprintf("all %d module digests equal HEAD's", len(head.modules)), true
		}
		return strings.Join(parts, "; "), false
	case r.PTXOne != "":
		if r.PTXOne == head.modules[r.PTXOneModule] {
			return fmt.Sprintf("records only %s's digest, equal to HEAD's", r.PTXOneModule), false
		}
		return fmt.Sprintf("records only %s's digest, which differs from HEAD's", r.PTXOneModule), false
	case r.Manifest != "":
		if r.Manifest == head.manifest {
			return "manifest digest equals HEAD's", true
		}
		return "manifest digest differs from HEAD's", false
	}
	return "no digests recorded", false
}

// verdict is the status word of an entry.
func (s status) verdict() string {
	switch {
	case s.current:
		return "current"
	case s.imported:
		return "imported"
	case s.experiment:
		return "experiment"
	}
	return "STALE"
}
