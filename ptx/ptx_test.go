package ptx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEmbeddedModulesVerify(t *testing.T) {
	m, err := EmbeddedManifest()
	require.NoError(t, err)
	require.NotEmpty(t, m.Modules)
	for _, rec := range m.Modules {
		mod, err := Load(rec.Name)
		require.NoError(t, err, rec.Name)
		assert.Equal(t, rec.Bytes, len(mod.Image))
		h, entries, err := ParsePTX(mod.Image)
		require.NoError(t, err)
		assert.Equal(t, rec.Target, h.Target)
		assert.Equal(t, rec.PTXISA, h.ISA)
		assert.Len(t, entries, len(rec.Entries))
		assert.NotEmpty(t, rec.NVCC)
		for _, c := range rec.Cubins {
			cub, err := LoadCubin(rec.Name, c.Arch)
			require.NoError(t, err, "%s %s", rec.Name, c.Arch)
			assert.Len(t, cub.Image, c.ImageBytes)
			assert.True(t, isCUDAELF(cub.Image), "%s %s", rec.Name, c.Arch)
		}
		if rec.Loader == LoaderCUDA {
			assert.Len(t, rec.Cubins, len(m.CubinArchs), "%s: one cubin per cubin_archs entry", rec.Name)
		} else {
			assert.Empty(t, rec.Cubins, rec.Name)
		}
	}
	optix, err := m.Module("optix_trace")
	require.NoError(t, err)
	assert.Equal(t, LoaderOptiX, optix.Loader)
	_, err = Load("no-such-module")
	assert.ErrorIs(t, err, ErrUnknownModule)
}

func TestTamperedModuleIsRefusedWithBothDigests(t *testing.T) {
	m, err := EmbeddedManifest()
	require.NoError(t, err)
	rec, err := m.Module("basic")
	require.NoError(t, err)
	img, err := embedded.ReadFile(rec.File)
	require.NoError(t, err)
	bad := append([]byte(nil), img...)
	bad[len(bad)/2] ^= 0x01
	fsys := fstest.MapFS{rec.File: {Data: bad}}
	_, err = LoadFS(fsys, m, "basic")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrDigestMismatch)
	var de *DigestError
	require.True(t, errors.As(err, &de))
	assert.Equal(t, rec.SHA256, de.Manifest)
	assert.Equal(t, SHA256Hex(bad), de.Actual)
	assert.Contains(t, err.Error(), rec.SHA256)
	assert.Contains(t, err.Error(), SHA256Hex(bad))
	// The untouched bytes load.
	_, err = LoadFS(fstest.MapFS{rec.File: {Data: img}}, m, "basic")
	assert.NoError(t, err)
}

const samplePTX = `//
.version 9.0
.target sm_90
.address_size 64

.visible .entry k0()
{
	ret;
}
.visible .entry k1(
	.param .u64 .ptr .global .align 4 k1_param_0,
	.param .f32 k1_param_1,
	.param .align 8 .b8 k1_param_2[24],
	.param .s32 k1_param_3
)
{
	ret;
}
`

func TestParsePTX(t *testing.T) {
	h, es, err := ParsePTX([]byte(samplePTX))
	require.NoError(t, err)
	assert.Equal(t, Header{ISA: "9.0", Target: "sm_90", AddressSize: 64}, h)
	require.Len(t, es, 2)
	assert.Equal(t, "k0", es[0].Name)
	assert.Empty(t, es[0].Params)
	assert.Equal(t, []Param{
		{Type: "u64", Size: 8, Align: 8},
		{Type: "f32", Size: 4, Align: 4},
		{Type: "b8", Size: 24, Align: 8},
		{Type: "s32", Size: 4, Align: 4},
	}, es[1].Params)
	_, _, err = ParsePTX([]byte(".visible .entry x()\n"))
	assert.Error(t, err)
}

func TestParseKernelSignatures(t *testing.T) {
	src := `
// __global__ void commented_out(int a) {}
extern "C" {
__global__ void __launch_bounds__(256, 2) rayd_a(const float* __restrict__ x, unsigned int n,
    float *out) {}
__global__ void rayd_b() {}
/* __global__ void hidden(int x) */
__global__ void rayd_c(int k, unsigned long long seed) {}
}`
	sigs := ParseKernelSignatures([]byte(src))
	assert.Len(t, sigs, 3)
	assert.Equal(t, []CParam{{"x", true}, {"n", false}, {"out", true}}, sigs["rayd_a"])
	assert.Empty(t, sigs["rayd_b"])
	assert.Equal(t, []CParam{{"k", false}, {"seed", false}}, sigs["rayd_c"])
}

// copyTree copies the ptx directory's sources, PTX and manifest to a temp dir.
func copyTree(t *testing.T) (string, *Manifest) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, CubinDir), 0o755))
	for _, pat := range []string{"*.ptx", "manifest.json", "src/*", CubinDir + "/*"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	m, err := ParseManifest(b)
	require.NoError(t, err)
	return dir, m
}

func TestCheckCleanTree(t *testing.T) {
	dir, m := copyTree(t)
	assert.Empty(t, Check(dir, m))
}

func TestCheckFindsEveryKindOfDrift(t *testing.T) {
	dir, m := copyTree(t)
	rec := m.Modules[0]
	// 1. flipped byte in the PTX
	p := filepath.Join(dir, rec.File)
	img, _ := os.ReadFile(p)
	img[len(img)/3] ^= 0x20
	require.NoError(t, os.WriteFile(p, img, 0o644))
	// 2. edited source without regenerated PTX
	s := filepath.Join(dir, rec.Source)
	src, _ := os.ReadFile(s)
	require.NoError(t, os.WriteFile(s, append(src, []byte("\n// edit\n")...), 0o644))
	// 3. an extra PTX file
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stray.ptx"), []byte(samplePTX), 0o644))
	probs := strings.Join(Check(dir, m), "\n")
	assert.Contains(t, probs, rec.File+" changed: manifest sha256 "+rec.SHA256)
	assert.Contains(t, probs, "source "+rec.Source+" changed since the PTX was generated")
	assert.Contains(t, probs, "extra file stray.ptx")
	// 4. a missing PTX file
	require.NoError(t, os.Remove(p))
	assert.Contains(t, strings.Join(Check(dir, m), "\n"), "no such file")
}

func TestSourceClosureFollowsIncludes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("src/a.cu", "#include \"b.cuh\"\n#include <cuda.h>\n")
	write("src/b.cuh", "#pragma once\n  # include \"c.cuh\"\n")
	write("src/c.cuh", "")
	got, err := SourceClosure(dir, "src/a.cu")
	require.NoError(t, err)
	assert.Equal(t, []string{"src/a.cu", "src/b.cuh", "src/c.cuh"}, got)
	write("src/d.cu", "#include \"missing.cuh\"\n")
	_, err = SourceClosure(dir, "src/d.cu")
	assert.Error(t, err)
}

func TestParseManifestRejectsBadInput(t *testing.T) {
	for _, s := range []string{`{`, `{"schema_version": 1}`, `{"schema_version": 3}`, `{"schema_version":2,"modules":[{"name":"a"}]}`,
		`{"schema_version":2,"modules":[{"name":"a","file":"a.ptx","loader":"cuda"},{"name":"a","file":"b.ptx","loader":"cuda"}]}`,
		`{"schema_version":2,"modules":[{"name":"a","file":"a.ptx"}]}`,
		`{"schema_version":2,"modules":[{"name":"a","file":"a.ptx","loader":"nvrtc"}]}`} {
		_, err := ParseManifest([]byte(s))
		assert.Error(t, err, s)
	}
}
