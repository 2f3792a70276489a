package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRepo is a throw-away git repository with the real PTX manifest.
type testRepo struct {
	t    *testing.T
	dir  string
	head headPTX
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	r := &testRepo{t: t, dir: t.TempDir()}
	manifest, err := os.ReadFile("../../../ptx/manifest.json")
	require.NoError(t, err)
	r.head, err = parseHeadPTX(manifest)
	require.NoError(t, err)
	r.git("init", "-q", "-b", "main")
	r.write("ptx/manifest.json", string(manifest))
	r.write("README.md", "# test\n")
	r.write("accel/a.go", "package accel\n")
	r.commit("first")
	return r
}

func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid",
		"-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

func (r *testRepo) write(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, rel)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

func (r *testRepo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// changeEach commits a change to each file of paths, one commit each.
func (r *testRepo) changeEach(paths ...string) {
	r.t.Helper()
	for _, p := range paths {
		r.write(p, "package x // "+p+"\n")
		r.commit("change " + p)
	}
}

// evidence writes an evidence file with a full head at commit c.
func (r *testRepo) evidence(rel, c string, dirty bool) {
	r.t.Helper()
	b, err := json.Marshal(map[string]any{"commit": c, "dirty": dirty, "ptx_sha256": r.head.modules,
		"ptx_manifest_sha256": r.head.manifest, "devices": []string{"NVIDIA H200"}})
	require.NoError(r.t, err)
	r.write(rel, string(b))
}

func (r *testRepo) status(strict bool, dirs ...string) (string, int) {
	var out bytes.Buffer
	if len(dirs) == 0 {
		dirs = []string{"tests/evidence"}
	}
	rc := run(&out, r.dir, "README.md", dirs, strict)
	return out.String(), rc
}

// TestEvidenceIsCurrentUntilGPUCodeChanges: an evidence file committed
// after the run it records is current; a commit to GPU code makes it
// stale; commits elsewhere (docs, commands, root tests) do not.
func TestEvidenceIsCurrentUntilGPUCodeChanges(t *testing.T) {
	r := newTestRepo(t)
	ran := r.git("rev-parse", "HEAD")
	r.evidence("tests/evidence/run.json", ran, false)
	r.write("tests/evidence/run.csv", "\"ID\",\"Kernel Name\"\n")
	r.write("README.md", "Figures (`tests/evidence/run.json`, commit `"+ran[:7]+"`).\n")
	r.write("cmd/rayd/main.go", "package main\n")
	r.write("x_test.go", "package rayd\n")
	r.commit("evidence, docs, a command and a root test")
	out, rc := r.status(true)
	assert.Zero(t, rc, out)
	assert.Contains(t, out, "current  tests/evidence/run.csv, run.json", "a CSV beside a record is its companion")
	assert.Contains(t, out, "no GPU-code commits since")
	assert.Contains(t, out, fmt.Sprintf("all %d module digests equal HEAD's", len(r.head.modules)))
	assert.Contains(t, out, "README cites tests/evidence/run.json at "+ran[:7]+": matches the file")

	r.changeEach("scene.go", "internal/engine/e.go", "accel/a.go")
	out, rc = r.status(true)
	assert.Equal(t, 1, rc, out)
	assert.Contains(t, out, "STALE    tests/evidence/run.csv, run.json")
	assert.Contains(t, out, "3 GPU-code commit(s) since")
	out, rc = r.status(false)
	assert.Zero(t, rc, "stale evidence is reported, not failed, without -strict\n%s", out)
}

// TestTestChangesStaleOnlyTheSuiteRecords: a commit to test files (in
// accel/ or the root package) or to the suites' test helpers leaves a
// benchmark record current and makes the test-suite records
// (gpu-accept*.json), which attest those tests, stale; a code commit makes
// both stale.
func TestTestChangesStaleOnlyTheSuiteRecords(t *testing.T) {
	r := newTestRepo(t)
	ran := r.git("rev-parse", "HEAD")
	for _, f := range []string{"tests/evidence/gpu-accept.json", "tests/evidence/gpu-accept-jit.json", "tests/evidence/run.json"} {
		r.evidence(f, ran, false)
	}
	r.commit("evidence")
	out, rc := r.status(true)
	require.Zero(t, rc, out)

	r.changeEach("accel/a_test.go", "x_test.go", "internal/testscene/s.go")
	out, rc = r.status(true)
	assert.Equal(t, 1, rc, out)
	assert.Contains(t, out, "current  tests/evidence/run.json")
	assert.Contains(t, out, "no GPU-code commits since")
	assert.Contains(t, out, "3 GPU-code or test commit(s) since")
	assert.NotContains(t, out, "current  tests/evidence/gpu-accept")

	r.write("accel/a.go", "package accel\n\nvar changed = 1\n")
	r.commit("code")
	out, _ = r.status(true)
	assert.Contains(t, out, "STALE    tests/evidence/run.json")
	assert.Contains(t, out, "1 GPU-code commit(s) since")
	assert.Contains(t, out, "4 GPU-code or test commit(s) since")
}

// TestSuiteListNamesTheAttestedTests: with gpuaccept's suite list at HEAD,
// only the listed packages' Go files (tests and code) stale the suite
// records among those outside gpuPaths; without one, every test file does.
func TestSuiteListNamesTheAttestedTests(t *testing.T) {
	r := newTestRepo(t)
	r.write(suiteList, `{"suites": [{"name": "rayd", "package": "."}, {"name": "cmd-rayd", "package": "./cmd/rayd"}]}`)
	ran := r.commit("suite list")
	r.evidence("tests/evidence/gpu-accept.json", ran, false)
	r.commit("evidence")
	r.write("geom/g_test.go", "package geom\n")
	r.write("cmd/rayd/sub/s_test.go", "package sub\n")
	r.commit("tests outside the suites")
	out, rc := r.status(true)
	assert.Zero(t, rc, out)
	assert.Contains(t, out, "no GPU-code or test commits since")
	r.write("cmd/rayd/m_test.go", "package main\n")
	r.commit("a suite's test")
	r.write("cmd/rayd/main.go", "package main\n")
	r.commit("a suite's code")
	out, rc = r.status(true)
	assert.Equal(t, 1, rc, out)
	assert.Contains(t, out, "2 GPU-code or test commit(s) since")

	assert.Contains(t, suitePathsOf(nil), ":(glob)**/*_test.go")
	assert.Equal(t, []string{":(glob)*.go", ":(glob)accel/*.go"},
		suitePathsOf([]byte(`{"suites": [{"package": "."}, {"package": "./accel"}]}`))[len(gpuCode)+len(suiteHelpers):])
}

func TestDirtyAndOldAndUnreadableEvidence(t *testing.T) {
	r := newTestRepo(t)
	ran := r.git("rev-parse", "HEAD")
	r.evidence("tests/evidence/dirty.json", ran, true)
	r.write("tests/evidence/old.json", `{"commit": "`+ran+`", "devices": ["NVIDIA H200"]}`)
	r.write("tests/evidence/notes.txt", "measured at commit "+ran[:7]+"\n")
	r.write("tests/evidence/launch.json", `{"ptx_sha256": "`+r.head.modules["basic"]+`"}`)
	r.commit("evidence")
	out, rc := r.status(false)
	assert.Zero(t, rc, out)
	assert.Contains(t, out, "(built from a dirty tree)")
	assert.Contains(t, out, "lacks: dirty flag (written before the evidence head existed)")
	assert.Contains(t, out, "PTX: no digests recorded")
	assert.Contains(t, out, "text: no PTX digests recorded")
	assert.Contains(t, out, "records only basic's digest, equal to HEAD's")
	assert.Contains(t, out, "lacks: commit, dirty flag")
	assert.Contains(t, out, "4 files: 0 current, 4 stale")
	assert.Contains(t, out, "commit "+ran[:7]+": no GPU-code commits since")

	r.write("tests/evidence/broken.json", "{")
	out, rc = r.status(false)
	assert.Equal(t, 1, rc)
	assert.Contains(t, out, "ERROR: tests/evidence/broken.json: not a JSON object")
}

func TestPTXDigestsThatDifferAreNamed(t *testing.T) {
	r := newTestRepo(t)
	ran := r.git("rev-parse", "HEAD")
	mods := map[string]string{}
	for k, v := range r.head.modules {
		mods[k] = v
	}
	mods["trace"] = strings.Repeat("0", 64)
	delete(mods, "edge")
	mods["retired"] = strings.Repeat("1", 64)
	b, err := json.Marshal(map[string]any{"commit": ran, "dirty": false, "ptx_sha256": mods})
	require.NoError(t, err)
	r.write("tests/evidence/x.json", string(b))
	r.commit("evidence")
	out, _ := r.status(false)
	assert.Contains(t, out, fmt.Sprintf("PTX: 1 of %d modules differ from HEAD's (trace); not recorded: edge; no longer at HEAD: retired",
		len(r.head.modules)))
	assert.Contains(t, out, "STALE")
}

// TestAShallowCloneSaysHistoryUnavailable rather than failing.
func TestAShallowCloneSaysHistoryUnavailable(t *testing.T) {
	r := newTestRepo(t)
	ran := r.git("rev-parse", "HEAD")
	r.write("accel/a.go", "package accel // changed\n")
	r.commit("gpu change")
	r.evidence("tests/evidence/run.json", ran, false)
	r.commit("evidence")
	clone := filepath.Join(t.TempDir(), "clone")
	cmd := exec.Command("git", "clone", "-q", "--depth", "1", "file://"+r.dir, clone)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var buf bytes.Buffer
	rc := run(&buf, clone, "", []string{"tests/evidence"}, false)
	assert.Zero(t, rc, buf.String())
	assert.Contains(t, buf.String(), "(shallow clone)")
	assert.Contains(t, buf.String(), "history unavailable (shallow clone)")
}

func TestWithoutARepositoryTheHistoryIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	manifest, err := os.ReadFile("../../../ptx/manifest.json")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ptx"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ev"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ptx", "manifest.json"), manifest, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ev", "a.json"), []byte(`{"commit": "abc1234", "dirty": false}`), 0o644))
	var buf bytes.Buffer
	rc := run(&buf, dir, "", []string{"ev"}, false)
	assert.Zero(t, rc, buf.String())
	assert.Contains(t, buf.String(), "evidence status: history unavailable")
	assert.Contains(t, buf.String(), "commit abc1234: history unavailable (no git repository)")
}

func TestREADMENotesMustNameFilesThatExist(t *testing.T) {
	r := newTestRepo(t)
	ran := r.git("rev-parse", "HEAD")
	r.evidence("tests/evidence/runs/a.json", ran, false)
	r.evidence("tests/evidence/runs/b.json", ran, false)
	r.write("README.md", "A (`tests/evidence/runs/`,\ncommit `"+ran[:9]+"`). B (`tests/evidence/runs/a.json`, commit `0123abc`).\n")
	r.commit("evidence")
	out, rc := r.status(false)
	assert.Zero(t, rc, out)
	assert.Contains(t, out, "README cites tests/evidence/runs/ at "+ran[:9]+": matches the file")
	assert.Contains(t, out, "README cites tests/evidence/runs/a.json at 0123abc: the file records "+ran[:12])
	_, rc = r.status(true)
	assert.Equal(t, 1, rc, "a disagreeing note fails under -strict")

	r.write("README.md", "Gone (`tests/evidence/none.json`, commit `0123abc`).\n")
	r.commit("docs")
	out, rc = r.status(false)
	assert.Equal(t, 1, rc)
	assert.Contains(t, out, "NO SUCH EVIDENCE FILE")
}

func TestGroupsJoinNeighboursWithTheSameStatus(t *testing.T) {
	ss := []status{{path: "d/a.json", lines: []string{"x"}}, {path: "d/b.json", lines: []string{"x"}},
		{path: "d/c.json", lines: []string{"y"}}, {path: "e/d.json", lines: []string{"y"}}}
	g := groups(ss)
	require.Len(t, g, 3)
	assert.Len(t, g[0], 2)
}

// Files in an experiments/ folder are experiment records: reported with
// their commit and PTX, never current (not even at HEAD's own commit), and
// not failed by -strict.
func TestExperimentRecords(t *testing.T) {
	r := newTestRepo(t)
	ran := r.git("rev-parse", "HEAD")
	r.evidence("benchmarks/results/experiments/screen/run.json", ran, false)
	r.evidence("benchmarks/results/run.json", ran, false)
	r.commit("a result and an experiment")
	out, rc := r.status(true, "benchmarks/results")
	assert.Zero(t, rc, out)
	assert.Contains(t, out, "experiment benchmarks/results/experiments/screen/run.json")
	assert.Contains(t, out, "experiment record: a measurement of the commit it names")
	assert.Contains(t, out, "current  benchmarks/results/run.json")
	assert.Contains(t, out, "2 files: 1 current, 0 stale, 0 imported, 1 experiment records")

	r.write("accel/a.go", "package accel\n\nvar changed = 1\n")
	r.commit("GPU code")
	out, rc = r.status(true, "benchmarks/results")
	assert.Equal(t, 1, rc, "the stale result fails -strict, the experiment does not\n%s", out)
	assert.Contains(t, out, "STALE    benchmarks/results/run.json")
	assert.Contains(t, out, "1 stale, 0 imported, 1 experiment records")
	assert.False(t, isExperiment("benchmarks/results/experimental.json"))
	assert.True(t, isExperiment("experiments/x.json"))
}
