package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyPTXDir copies the repository's ptx directory (PTX, manifest, sources).
func copyPTXDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	for _, pat := range []string{"*.ptx", "manifest.json", "src/*"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "ptx", pat))
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			rel, _ := filepath.Rel(filepath.Join("..", "..", "ptx"), f)
			require.NoError(t, os.WriteFile(filepath.Join(dir, rel), b, 0o644))
		}
	}
	return dir
}

func TestCheckPassesOnTheCommittedTree(t *testing.T) {
	assert.NoError(t, run([]string{"check", "-dir", filepath.Join("..", "..", "ptx")}))
}

func TestCheckFailsOnAFlippedByteNamingBothDigests(t *testing.T) {
	dir := copyPTXDir(t)
	m, err := readManifest(dir)
	require.NoError(t, err)
	rec := m.Modules[0]
	p := filepath.Join(dir, rec.File)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(p, b, 0o644))
	err = run([]string{"check", "-dir", dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), rec.SHA256)
	assert.Contains(t, err.Error(), "file sha256 ")
}

func TestUpdateRepairsDigestsAndCheckAgrees(t *testing.T) {
	dir := copyPTXDir(t)
	m, err := readManifest(dir)
	require.NoError(t, err)
	p := filepath.Join(dir, m.Modules[0].File)
	b, _ := os.ReadFile(p)
	require.NoError(t, os.WriteFile(p, append(b, []byte("\n// regenerated\n")...), 0o644))
	require.Error(t, run([]string{"check", "-dir", dir}))
	require.NoError(t, run([]string{"update", "-dir", dir}))
	assert.NoError(t, run([]string{"check", "-dir", dir}))
}

func TestUnlistedSourceIsReported(t *testing.T) {
	dir := copyPTXDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "zz_new.cu"), []byte("extern \"C\" __global__ void rayd_x() {}\n"), 0o644))
	err := run([]string{"check", "-dir", dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "extra source src/zz_new.cu")
	assert.Error(t, run([]string{"bogus"}))
	assert.Error(t, run(nil))
}

// A build of one module vouches only for that module's sources: a header
// edited under another module still fails check until that one is rebuilt.
// (A stand-in nvcc copies the committed PTX, so no CUDA toolkit is needed.)
func TestBuildOfOneModuleLeavesTheOthersStale(t *testing.T) {
	dir := copyPTXDir(t)
	nvcc := filepath.Join(t.TempDir(), "nvcc")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 0.0, V0.0.0'; exit 0; fi\n" +
		"while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=$2; fi; src=$1; shift; done\n" +
		"cp \"$(basename \"$out\")\" \"$out.tmp\" 2>/dev/null || cp \"$out\" \"$out.tmp\"; mv \"$out.tmp\" \"$out\"\n"
	require.NoError(t, os.WriteFile(nvcc, []byte(script), 0o755))
	hdr := filepath.Join(dir, "src", "rayd.cuh")
	b, err := os.ReadFile(hdr)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(hdr, append(b, []byte("\n// edited\n")...), 0o644))
	require.NoError(t, run([]string{"build", "-dir", dir, "-nvcc", nvcc, "-module", "basic"}))
	err = run([]string{"check", "-dir", dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "module trace: source src/rayd.cuh changed")
	assert.NotContains(t, err.Error(), "module basic:")
}

// -h prints the help on stdout and exits 0, for the tool and every command;
// usage errors exit 2, a failed check 1.
func TestHelpAndExitStatuses(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"check", "-h"}, {"update", "-h"}, {"build", "-help"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, 0, cli(args, &out, &errb), "%v", args)
		assert.Contains(t, out.String(), "usage: ptxdigest check|update|build", "%v", args)
		assert.Contains(t, out.String(), "-nvcc", "%v", args)
		assert.Empty(t, errb.String(), "%v", args)
	}
	for _, args := range [][]string{nil, {"bogus"}, {"check", "-bogus"}, {"check", "extra"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, cli(args, &out, &errb), "%v", args)
		assert.Contains(t, errb.String(), "usage: ptxdigest", "%v", args)
		assert.Empty(t, out.String(), "%v", args)
	}
	dir := copyPTXDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{"), 0o644))
	var out, errb bytes.Buffer
	assert.Equal(t, 1, cli([]string{"check", "-dir", dir}, &out, &errb))
	var sink bytes.Buffer
	assert.Equal(t, 0, cli([]string{"check", "-dir", filepath.Join("..", "..", "ptx")}, &sink, &sink))
}
