package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// gpuPaths are the paths whose changes make GPU evidence stale: the
// kernels and everything that launches them, and the engine code (the
// root package's non-test Go files and internal/engine/).
var gpuPaths = []string{"ptx/", "accel/", "launch/", "replica/", "driver/", "shard/", "internal/engine/",
	":(glob)*.go", ":(exclude,glob)*_test.go"}

// repo answers the git questions of the status report.
type repo struct {
	root    string
	head    string
	shallow bool
	// Answers already worked out: many evidence files share a commit, and
	// the commits since one are the same question for each of them.
	sinceOf map[string]since
	docOf   map[string]bool
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

// gpuCommitsSince lists the GPU-code commits in HEAD's history that the
// evidence commit c does not contain; commits that change only comments
// there (codeOnly) cannot change what runs and are left out.
func (g *repo) gpuCommitsSince(c string) since {
	if g == nil {
		return since{unavailable: "history unavailable (no git repository)"}
	}
	if s, ok := g.sinceOf[c]; ok {
		return s
	}
	s := g.commitsSince(c)
	if g.sinceOf == nil {
		g.sinceOf = map[string]since{}
	}
	g.sinceOf[c] = s
	return s
}

// commitsSince answers gpuCommitsSince for c.
func (g *repo) commitsSince(c string) since {
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
	out, err := g.git(append([]string{"rev-list", "--abbrev-commit", "--abbrev=7", full + "..HEAD", "--"}, gpuPaths...)...)
	if err != nil {
		return since{full: full, unavailable: "history unavailable (" + err.Error() + ")"}
	}
	s := since{full: full}
	if out != "" {
		s.commits = g.codeOnly(strings.Fields(out))
	}
	return s
}

// show returns a file's contents at HEAD.
func (g *repo) show(path string) ([]byte, error) {
	return g.raw("show", "HEAD:"+path)
}
