// Command evidencestatus reports, for every committed GPU evidence file
// (tests/evidence and benchmarks/results: JSON, JSON lines and their text
// companions), the commit it records, the GPU-code commits made since
// (ptx/, accel/, launch/, replica/, driver/, shard/, internal/engine/ and
// the root package's non-test Go files; for the test-suite records,
// gpu-accept*.json, also the Go files, tests and code, of the GPU suites
// that internal/tools/gpuaccept/suites.json lists, and internal/testscene
// and internal/gputest: what they attest; a commit that changes only
// comments in Go files there does not count), and whether its PTX digests
// equal HEAD's manifest. Files written before the evidence head existed are
// reported with the fields they lack; files in an experiments/ folder (a
// branch's measurements kept for the decision they record) are reported as
// experiment records, never as current; in a shallow clone, or for a commit
// the repository does not hold, the history part says "history
// unavailable" instead of failing. It also checks the README's source
// notes ("`path`, commit `abc1234`") against the files they cite.
//
//	evidencestatus [-strict] [-root .] [dir ...]
//
// It needs no GPU (make evidence-status; CI runs it). It exits 1 when an
// evidence file cannot be read or the README cites a file that does not
// exist; with -strict, also when any evidence is stale or a README note
// disagrees with its file.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

func main() {
	root := flag.String("root", ".", "repository root")
	readme := flag.String("readme", "README.md", "README whose source notes are checked (relative to -root; empty: none)")
	strict := flag.Bool("strict", false, "exit 1 when any evidence is stale or a README note disagrees with its file")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"tests/evidence", "benchmarks/results"}
	}
	os.Exit(run(os.Stdout, *root, *readme, dirs, *strict))
}

// report is the outcome of one run.
type report struct {
	statuses  []status
	cites     []citation
	errors    []string
	head      string
	shallow   bool
	noHistory string
}

func run(w io.Writer, root, readme string, dirs []string, strict bool) int {
	rep := collect(root, readme, dirs)
	print(w, rep)
	rc := 0
	if len(rep.errors) > 0 {
		rc = 1
	}
	for _, c := range rep.cites {
		if c.missing || (strict && !c.ok()) {
			rc = 1
		}
	}
	if strict {
		for _, s := range rep.statuses {
			if !s.current && !s.imported && !s.experiment {
				rc = 1
			}
		}
	}
	return rc
}

func collect(root, readme string, dirs []string) *report {
	rep := &report{}
	g, err := openRepo(root)
	if err != nil {
		rep.noHistory = "history unavailable (" + err.Error() + ")"
		g = nil
	} else {
		rep.head, rep.shallow = g.head, g.shallow
	}
	var manifest []byte
	if g != nil {
		manifest, err = g.show("ptx/manifest.json")
	}
	if g == nil || err != nil {
		manifest, err = os.ReadFile(filepath.Join(root, "ptx", "manifest.json"))
	}
	head := headPTX{modules: map[string]string{}}
	if err == nil {
		head, err = parseHeadPTX(manifest)
	}
	if err != nil {
		rep.errors = append(rep.errors, "HEAD's PTX manifest: "+err.Error())
	}
	files, err := evidenceFiles(root, dirs)
	if err != nil {
		rep.errors = append(rep.errors, err.Error())
	}
	var recs []*record
	byPath := map[string]status{}
	for _, f := range files {
		r, err := readRecord(root, f)
		if err != nil {
			rep.errors = append(rep.errors, err.Error())
			continue
		}
		recs = append(recs, r)
	}
	// JSON records first, so that text companions can take their status.
	for _, r := range recs {
		if r.Companion == "" {
			byPath[r.Path] = judge(r, g, head)
		}
	}
	for _, r := range recs {
		s, ok := byPath[r.Path]
		if !ok {
			s = byPath[r.Companion]
			s.path = r.Path
		}
		rep.statuses = append(rep.statuses, s)
	}
	if readme != "" {
		if b, err := os.ReadFile(filepath.Join(root, readme)); err == nil {
			rep.cites = citations(string(b), recs)
		} else {
			rep.errors = append(rep.errors, err.Error())
		}
	}
	return rep
}

// groups joins neighbouring files of one folder with the same status.
func groups(ss []status) [][]status {
	var out [][]status
	for _, s := range ss {
		if n := len(out); n > 0 {
			last := out[n-1]
			if path.Dir(last[0].path) == path.Dir(s.path) && last[0].key() == s.key() {
				out[n-1] = append(last, s)
				continue
			}
		}
		out = append(out, []status{s})
	}
	return out
}

func print(w io.Writer, rep *report) {
	if rep.noHistory != "" {
		fmt.Fprintf(w, "evidence status: %s\n", rep.noHistory)
	} else {
		shallow := ""
		if rep.shallow {
			shallow = " (shallow clone)"
		}
		fmt.Fprintf(w, "evidence status at HEAD %.12s%s; GPU-code paths: %s and the root package's non-test .go files"+
			" (test-suite records: also the GPU suites' Go files, %s)\n", rep.head, shallow, strings.Join(gpuPaths[:7], " "),
			strings.Join(suiteHelpers, " "))
	}
	n := map[string]int{}
	for _, grp := range groups(rep.statuses) {
		s := grp[0]
		name := s.path
		if len(grp) > 2 {
			name = fmt.Sprintf("%s/ (%d files: %s ... %s)", path.Dir(s.path), len(grp), path.Base(s.path), path.Base(grp[len(grp)-1].path))
		} else if len(grp) == 2 {
			name = s.path + ", " + path.Base(grp[1].path)
		}
		fmt.Fprintf(w, "%-8s %s\n", s.verdict(), name)
		for _, l := range s.lines {
			fmt.Fprintf(w, "         %s\n", l)
		}
		n[s.verdict()] += len(grp)
	}
	match := 0
	for _, c := range rep.cites {
		fmt.Fprintln(w, c)
		if c.ok() {
			match++
		}
	}
	for _, e := range rep.errors {
		fmt.Fprintln(w, "ERROR:", e)
	}
	fmt.Fprintf(w, "evidence-status: %d files: %d current, %d stale, %d imported, %d experiment records; README: %d source notes, %d match their files\n",
		len(rep.statuses), n["current"], n["STALE"], n["imported"], n["experiment"], len(rep.cites), match)
}
