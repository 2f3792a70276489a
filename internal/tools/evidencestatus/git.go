package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// gpuPaths are the paths whose changes make GPU evidence stale: the
// kernels and everything that launches them, and the engine code (the
// root package's non-test Go files and internal/engine/). Test files are
// not among them: they run in no benchmark.
var gpuPaths = append(slices.Clone(gpuCode), ":(exclude,glob)**/*_test.go")

// gpuCode are gpuPaths with their test files.
var gpuCode = []string{"ptx/", "accel/", "launch/", "replica/", "driver/", "shard/", "internal/engine/", ":(glob)*.go"}

// suiteHelpers are the test helpers the GPU suites draw their scenes,
// seeds and devices from.
var suiteHelpers = []string{"internal/testscene/", "internal/gputest/"}

// suiteList is where gpuaccept lists the GPU-tier suites (their packages).
const suiteList = "internal/tools/gpuaccept/suites.json"

// suitePathsOf returns the paths whose changes make the test-suite evidence
// (gpuaccept's gpu-accept*.json) stale: gpuPaths with their test files,
// the Go files (tests and code) of every suite package that list names
// (its JSON; each package's own directory), and suiteHelpers. The suites
// attest the packages and tests they ran, so a change there needs a new
// run. Without a readable list, every test file counts.
func suitePathsOf(list []byte) []string {
	paths := append(slices.Clone(gpuCode), suiteHelpers...)
	var l struct {
		Suites []struct {
			Package string `json:"package"`
		} `json:"suites"`
	}
	if json.Unmarshal(list, &l) != nil || len(l.Suites) == 0 {
		return append(paths, ":(glob)**/*_test.go")
	}
	for _, st := range l.Suites {
		dir := strings.Trim(path.Clean(strings.TrimPrefix(st.Package, "./")), "/")
		if dir == "." || dir == "" {
			paths = append(paths, ":(glob)*.go")
		} else {
			paths = append(paths, ":(glob)"+dir+"/*.go")
		}
	}
	return paths
}

// pathsFor returns the pathspecs that decide whether the evidence file rel
// is stale, and what their commits are called.
func (g *repo) pathsFor(rel string) (paths []string, what string) {
	if g != nil && isSuiteRecord(rel) {
		return g.suitePaths, "GPU-code or test"
	}
	return gpuPaths, "GPU-code"
}

// isSuiteRecord reports whether rel is a test-suite record (gpuaccept's
// output: gpu-accept.json, gpu-accept-jit.json).
func isSuiteRecord(rel string) bool {
	return strings.HasPrefix(path.Base(filepath.ToSlash(rel)), "gpu-accept")
}

// repo answers the git questions of the status report.
type repo struct {
	root    string
	head    string
	shallow bool
	// Answers already worked out: many evidence files share a commit, and
	// the commits since one are the same question for each of them (keyed
	// by the pathspec set too).
	sinceOf map[string]since
	docOf   map[string]bool
	// suitePaths are suitePathsOf HEAD's suite list.
	suitePaths []string
}

func (g *repo) git(args ...string) (string, error) {
	b, err := g.raw(args...)
	return strings.TrimSpace(string(b)), err
}

func (g *repo) raw(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", g.root}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

func openRepo(root string) (*repo, error) {
	g := &repo{root: root}
	var err error
	if g.head, err = g.git("rev-parse", "HEAD"); err != nil {
		return nil, err
	}
	s, _ := g.git("rev-parse", "--is-shallow-repository")
	g.shallow = s == "true"
	list, _ := g.show(suiteList)
	g.suitePaths = suitePathsOf(list)
	return g, nil
}

// since is what the history says about an evidence commit.
type since struct {
	full    string   // the full hash ("" when unknown here)
	commits []string // GPU-code commits after it, newest first (short hashes)
	// unavailable says why the history cannot answer (a shallow clone,
	// or a commit this repository does not hold).
	unavailable string
}

// gpuCommitsSince lists the commits in HEAD's history that the evidence
// commit c does not contain and that change paths; commits that change only
// comments there (codeOnly) cannot change what runs and are left out.
func (g *repo) gpuCommitsSince(c string, paths []string) since {
	if g == nil {
		return since{unavailable: "history unavailable (no git repository)"}
	}
	key := c + "\x00" + strings.Join(paths, "\x00")
	if s, ok := g.sinceOf[key]; ok {
		return s
	}
	s := g.commitsSince(c, paths)
	if g.sinceOf == nil {
		g.sinceOf = map[string]since{}
	}
	g.sinceOf[key] = s
	return s
}

// commitsSince answers gpuCommitsSince for c.
func (g *repo) commitsSince(c string, paths []string) since {
	full, err := g.git("rev-parse", "--verify", "--quiet", c+"^{commit}")
	if err != nil || full == "" {
		if g.shallow {
			return since{unavailable: "history unavailable (shallow clone)"}
		}
		return since{unavailable: "commit not in this repository"}
	}
	if _, err := g.git("merge-base", "--is-ancestor", full, "HEAD"); err != nil {
		if g.shallow {
			return since{full: full, unavailable: "history unavailable (shallow clone)"}
		}
		return since{full: full, unavailable: "not an ancestor of HEAD"}
	}
	out, err := g.git(append([]string{"rev-list", "--abbrev-commit", "--abbrev=7", full + "..HEAD", "--"}, paths...)...)
	if err != nil {
		return since{full: full, unavailable: "history unavailable (" + err.Error() + ")"}
	}
	s := since{full: full}
	if out != "" {
		s.commits = g.codeOnly(strings.Fields(out), paths)
	}
	return s
}

// show returns a file's contents at HEAD.
func (g *repo) show(path string) ([]byte, error) {
	return g.raw("show", "HEAD:"+path)
}
