package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/ptx"
)

// A full build writes the PTX and one cubin per architecture of every CUDA
// module in one go (none for the OptiX module), and check accepts it.
func TestBuildWritesPTXAndCubinsAndCheckAgrees(t *testing.T) {
	dir := copyPTXDir(t)
	require.NoError(t, run([]string{"build", "-dir", dir, "-nvcc", standInNVCC(t), "-archs", "sm_80,sm_90", "-j", "4"}))
	require.NoError(t, run([]string{"check", "-dir", dir}))
	m, err := readManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"sm_80", "sm_90"}, m.CubinArchs)
	for _, rec := range m.Modules {
		assert.Equal(t, "Cuda compilation tools, release 0.0, V0.0.0", rec.NVCC)
		if rec.Loader == ptx.LoaderOptiX {
			assert.Empty(t, rec.Cubins, rec.Name)
			continue
		}
		require.Len(t, rec.Cubins, 2, rec.Name)
		for i, arch := range m.CubinArchs {
			c := rec.Cubins[i]
			assert.Equal(t, arch, c.Arch)
			assert.Equal(t, ptx.CubinFile(rec.Name, arch), c.File)
			assert.Equal(t, rec.SHA256, c.PTXSHA256)
			assert.Equal(t, rec.NVCC, c.NVCC)
			assert.Equal(t, ptx.CubinFlags(rec.Flags, arch), c.Flags)
			gz, err := os.ReadFile(filepath.Join(dir, c.File))
			require.NoError(t, err)
			img, err := ptx.DecompressCubin(gz, c.ImageBytes)
			require.NoError(t, err)
			assert.Contains(t, string(img), rec.Source+" "+arch, "the cubin of %s for %s", rec.Name, arch)
		}
	}
	optix, err := m.Module("optix_trace")
	require.NoError(t, err)
	assert.Equal(t, ptx.LoaderOptiX, optix.Loader)
}

// ptxdigest check refuses a tampered copy: a flipped byte in a cubin is
// reported with both digests, exactly like one in a PTX.
func TestCheckFailsOnAFlippedByteInACubin(t *testing.T) {
	dir := copyPTXDir(t)
	require.NoError(t, run([]string{"build", "-dir", dir, "-nvcc", standInNVCC(t), "-archs", "sm_86,sm_90"}))
	m, err := readManifest(dir)
	require.NoError(t, err)
	rec, err := m.Module("bvh_build")
	require.NoError(t, err)
	c, ok := rec.Cubin("sm_90")
	require.True(t, ok)
	p := filepath.Join(dir, c.File)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(p, b, 0o644))
	err = run([]string{"check", "-dir", dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "module bvh_build: "+c.File+" changed: manifest sha256 "+c.SHA256)
	assert.Contains(t, err.Error(), "file sha256 "+ptx.SHA256Hex(b))
	assert.Contains(t, err.Error(), "1 problem(s)")
}

// A one-module build rebuilds that module's PTX and cubins for the
// manifest's architectures and leaves every other record alone; asking it
// for other architectures is a usage error; a full build with -archs none
// drops every cubin and its file.
func TestModuleBuildKeepsTheManifestArchitectures(t *testing.T) {
	dir := copyPTXDir(t)
	nvcc := standInNVCC(t)
	require.NoError(t, run([]string{"build", "-dir", dir, "-nvcc", nvcc, "-archs", "sm_80,sm_89"}))
	before, err := readManifest(dir)
	require.NoError(t, err)
	stray := filepath.Join(dir, ptx.CubinDir, "trace.sm_75.cubin.gz")
	require.NoError(t, os.WriteFile(stray, []byte("old"), 0o644))
	require.NoError(t, run([]string{"build", "-dir", dir, "-nvcc", nvcc, "-module", "trace"}))
	require.NoError(t, run([]string{"check", "-dir", dir}))
	after, err := readManifest(dir)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.NoFileExists(t, stray, "a cubin the manifest no longer records is removed")

	var out, errb strings.Builder
	assert.Equal(t, 2, cli([]string{"build", "-dir", dir, "-nvcc", nvcc, "-module", "trace", "-archs", "sm_90"}, &out, &errb))
	assert.Contains(t, errb.String(), "keeps the manifest's cubin_archs [sm_80 sm_89]")
	assert.Equal(t, 2, cli([]string{"build", "-dir", dir, "-nvcc", nvcc, "-archs", "compute_90"}, &out, &errb))
	assert.Equal(t, 2, cli([]string{"build", "-dir", dir, "-nvcc", nvcc, "-module", "nosuch"}, &out, &errb))

	require.NoError(t, run([]string{"build", "-dir", dir, "-nvcc", nvcc, "-archs", "none"}))
	require.NoError(t, run([]string{"check", "-dir", dir}))
	m, err := readManifest(dir)
	require.NoError(t, err)
	assert.Empty(t, m.CubinArchs)
	files, _ := filepath.Glob(filepath.Join(dir, ptx.CubinDir, "*.cubin.gz"))
	assert.Empty(t, files)
}

// With a CUDA toolkit on the PATH, a real build of the basic module (PTX and
// two cubins) passes check and yields CUDA ELF images. Skips without nvcc.
func TestBuildWithNVCC(t *testing.T) {
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not on the PATH: the real build is not tested here")
	}
	src := copyPTXDir(t)
	m, err := readManifest(src)
	require.NoError(t, err)
	rec, err := m.Module("basic")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	b, err := os.ReadFile(filepath.Join(src, rec.Source))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, rec.Source), b, 0o644))
	one := &ptx.Manifest{SchemaVersion: ptx.SchemaVersion, CubinArchs: []string{}, Modules: []ptx.ModuleRecord{{
		Name: rec.Name, File: rec.File, Source: rec.Source, Flags: rec.Flags, Loader: ptx.LoaderCUDA}}}
	enc, err := one.Encode()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), enc, 0o644))
	require.NoError(t, run([]string{"build", "-dir", dir, "-nvcc", nvcc, "-archs", "sm_80,sm_90"}))
	require.NoError(t, run([]string{"check", "-dir", dir}))
	got, err := readManifest(dir)
	require.NoError(t, err)
	require.Len(t, got.Modules[0].Cubins, 2)
	for _, c := range got.Modules[0].Cubins {
		gz, err := os.ReadFile(filepath.Join(dir, c.File))
		require.NoError(t, err)
		img, err := ptx.DecompressCubin(gz, c.ImageBytes)
		require.NoError(t, err)
		assert.Equal(t, "\x7fELF", string(img[:4]), c.Arch)
		assert.Greater(t, c.ImageBytes, c.Bytes, "%s: the stored file is compressed", c.Arch)
		assert.Contains(t, c.NVCC, "release")
	}
}
