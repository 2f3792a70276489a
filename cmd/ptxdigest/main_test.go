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
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cubin"), 0o755))
	for _, pat := range []string{"*.ptx", "manifest.json", "src/*", "cubin/*"} {
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

// update vouches for hand-regenerated PTX (the OptiX module: it has no
// cubins, whose link to the PTX update never rewrites).
func TestUpdateRepairsDigestsAndCheckAgrees(t *testing.T) {
	dir := copyPTXDir(t)
	m, err := readManifest(dir)
	require.NoError(t, err)
	rec, err := m.Module("optix_trace")
	require.NoError(t, err)
	p := filepath.Join(dir, rec.File)
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

// standInNVCC writes a stand-in nvcc that copies the committed PTX for a
// -ptx run and writes a small CUDA ELF naming the source and architecture
// for a -cubin run, so that builds are tested without a CUDA toolkit.
func standInNVCC(t *testing.T) string {
	t.Helper()
	nvcc := filepath.Join(t.TempDir(), "nvcc")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 0.0, V0.0.0'; exit 0; fi\n" +
		"cubin=; arch=\n" +
		"while [ $# -gt 0 ]; do case \"$1\" in -cubin) cubin=1;; -arch=*) arch=${1#-arch=};; -o) out=$2;; esac; src=$1; shift; done\n" +
		"if [ -n \"$cubin\" ]; then printf '\\177ELF\\002\\001\\001\\000\\000\\000\\000\\000\\000\\000\\000\\000\\002\\000\\276\\000%s %s\\n' \"$src\" \"$arch\" > \"$out\"; exit 0; fi\n" +
		"cp \"$(basename \"$out\")\" \"$out.tmp\" 2>/dev/null || cp \"$out\" \"$out.tmp\"; mv \"$out.tmp\" \"$out\"\n"
	require.NoError(t, os.WriteFile(nvcc, []byte(script), 0o755))
	return nvcc
}

// A build of one module vouches only for that module's sources: a header
// edited under another module still fails check until that one is rebuilt.
func TestBuildOfOneModuleLeavesTheOthersStale(t *testing.T) {
	dir := copyPTXDir(t)
	nvcc := standInNVCC(t)
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
