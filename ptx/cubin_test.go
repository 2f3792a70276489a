package ptx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCubin is a stand-in cubin: an ELF header with machine EM_CUDA and a
// body that names the module and architecture (the digests are what the
// checks are about; no driver reads it).
func fakeCubin(module, arch string) []byte {
	hdr := []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xbe\x00")
	return append(hdr, fmt.Sprintf("stand-in cubin of %s for %s\n", module, arch)...)
}

// addCubins replaces the cubins in dir with stand-ins for archs beside every
// CUDA module of m and records them as ptxdigest build does.
func addCubins(t *testing.T, dir string, m *Manifest, archs ...string) {
	t.Helper()
	old, _ := filepath.Glob(filepath.Join(dir, CubinDir, "*.cubin.gz"))
	for _, f := range old {
		require.NoError(t, os.Remove(f))
	}
	m.CubinArchs = archs
	for i := range m.Modules {
		rec := &m.Modules[i]
		rec.Cubins = []CubinRecord{}
		if rec.Loader != LoaderCUDA {
			continue
		}
		for _, a := range archs {
			gz, err := CompressCubin(fakeCubin(rec.Name, a))
			require.NoError(t, err)
			c := CubinRecord{Arch: a, File: CubinFile(rec.Name, a), PTXSHA256: rec.SHA256, NVCC: rec.NVCC,
				Flags: CubinFlags(rec.Flags, a), Target: a}
			require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(c.File)), gz, 0o644))
			require.NoError(t, DescribeCubin(dir, &c))
			rec.Cubins = append(rec.Cubins, c)
		}
	}
}

func TestArchNames(t *testing.T) {
	assert.Equal(t, "sm_90", Arch(9, 0))
	assert.Equal(t, "sm_86", Arch(8, 6))
	assert.Equal(t, "sm_120", Arch(12, 0))
	for s, want := range map[string]struct {
		n        int
		specific bool
		ok       bool
	}{"sm_90": {90, false, true}, "sm_90a": {90, true, true}, "sm_100f": {100, true, true}, "sm_120": {120, false, true},
		"compute_90": {0, false, false}, "sm_9": {0, false, false}, "sm_90b": {0, false, false}, "": {0, false, false}} {
		n, specific, ok := ParseArch(s)
		assert.Equal(t, want.ok, ok, s)
		if want.ok {
			assert.Equal(t, want.n, n, s)
			assert.Equal(t, want.specific, specific, s)
		}
	}
	assert.Equal(t, "cubin/trace.sm_89.cubin.gz", CubinFile("trace", "sm_89"))
}

func TestCubinFlagsAreThePTXFlags(t *testing.T) {
	assert.Equal(t, []string{"-cubin", "-arch=sm_86", "-O3", "-std=c++17", "-fmad=false"},
		CubinFlags([]string{"-ptx", "-arch=compute_90", "-O3", "-std=c++17", "-fmad=false"}, "sm_86"))
	assert.Equal(t, []string{"-cubin", "-arch=sm_80", "-O3"}, CubinFlags([]string{"-O3"}, "sm_80"))
}

func TestCompressCubinRoundTripsDeterministically(t *testing.T) {
	img := fakeCubin("basic", "sm_90")
	a, err := CompressCubin(img)
	require.NoError(t, err)
	b, err := CompressCubin(img)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	got, err := DecompressCubin(a, len(img))
	require.NoError(t, err)
	assert.Equal(t, img, got)
	_, err = DecompressCubin(a, len(img)-1)
	assert.ErrorContains(t, err, "exceeds")
	_, err = DecompressCubin([]byte("not gzip"), 0)
	assert.Error(t, err)
}

// manifestWithCubin is the embedded manifest with one stand-in cubin of
// basic for sm_90, and the file system that holds it.
func manifestWithCubin(t *testing.T) (*Manifest, fstest.MapFS, []byte) {
	t.Helper()
	b, err := embedded.ReadFile("manifest.json")
	require.NoError(t, err)
	m, err := ParseManifest(b)
	require.NoError(t, err)
	rec, err := m.Module("basic")
	require.NoError(t, err)
	img := fakeCubin("basic", "sm_90")
	gz, err := CompressCubin(img)
	require.NoError(t, err)
	m.CubinArchs = []string{"sm_90"}
	rec.Cubins = []CubinRecord{{Arch: "sm_90", File: CubinFile("basic", "sm_90"), Bytes: len(gz), SHA256: SHA256Hex(gz),
		ImageBytes: len(img), ImageSHA256: SHA256Hex(img), PTXSHA256: rec.SHA256, NVCC: rec.NVCC,
		Flags: CubinFlags(rec.Flags, "sm_90"), Target: "sm_90"}}
	return m, fstest.MapFS{CubinFile("basic", "sm_90"): {Data: gz}}, img
}

func TestLoadCubinVerifiesTheFileAndTheCubin(t *testing.T) {
	m, fsys, img := manifestWithCubin(t)
	c, err := LoadCubinFS(fsys, m, "basic", "sm_90")
	require.NoError(t, err)
	assert.Equal(t, img, c.Image)
	assert.Equal(t, "basic", c.Module.Name)
	assert.Equal(t, "sm_90", c.Record.Arch)

	_, err = LoadCubinFS(fsys, m, "basic", "sm_86")
	assert.ErrorIs(t, err, ErrNoCubin)
	_, err = LoadCubinFS(fsys, m, "nope", "sm_90")
	assert.ErrorIs(t, err, ErrUnknownModule)
	_, err = LoadCubinFS(fstest.MapFS{}, m, "basic", "sm_90")
	assert.Error(t, err)
}

// A flipped byte in a stored cubin is refused like one in a PTX: a
// *DigestError naming both digests, matching ErrDigestMismatch.
func TestTamperedCubinIsRefusedWithBothDigests(t *testing.T) {
	m, fsys, _ := manifestWithCubin(t)
	rec, _ := m.Module("basic")
	c := rec.Cubins[0]
	bad := append([]byte(nil), fsys[c.File].Data...)
	bad[len(bad)/2] ^= 0x01
	_, err := LoadCubinFS(fstest.MapFS{c.File: {Data: bad}}, m, "basic", "sm_90")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrDigestMismatch)
	var de *DigestError
	require.True(t, errors.As(err, &de))
	assert.Equal(t, c.SHA256, de.Manifest)
	assert.Equal(t, SHA256Hex(bad), de.Actual)
	assert.Equal(t, c.File, de.File)
	assert.Contains(t, err.Error(), c.SHA256)
	assert.Contains(t, err.Error(), SHA256Hex(bad))

	// The stored file intact but the manifest vouching for another cubin:
	// the decompressed image is refused too.
	rec.Cubins[0].ImageSHA256 = SHA256Hex([]byte("another cubin"))
	_, err = LoadCubinFS(fsys, m, "basic", "sm_90")
	require.ErrorAs(t, err, &de)
	assert.Equal(t, c.File+" (decompressed)", de.File)
	assert.Equal(t, c.ImageSHA256, de.Actual)
}

func TestParseManifestRejectsBadCubins(t *testing.T) {
	const mod = `{"name":"%s","file":"a.ptx","loader":"%s","cubins":[%s]}`
	cub := func(arch string) string { return fmt.Sprintf(`{"arch":"%s","file":"cubin/a.%s.cubin.gz"}`, arch, arch) }
	doc := func(archs, modules string) string {
		return fmt.Sprintf(`{"schema_version":2,"cubin_archs":[%s],"modules":[%s]}`, archs, modules)
	}
	ok := doc(`"sm_90"`, fmt.Sprintf(mod, "a", "cuda", cub("sm_90")))
	m, err := ParseManifest([]byte(ok))
	require.NoError(t, err)
	_, found := m.Modules[0].Cubin("sm_90")
	assert.True(t, found)
	for name, s := range map[string]string{
		"optix module with a cubin": doc(`"sm_90"`, fmt.Sprintf(mod, "a", "optix", cub("sm_90"))),
		"arch not in cubin_archs":   doc(`"sm_90"`, fmt.Sprintf(mod, "a", "cuda", cub("sm_86"))),
		"two cubins for one arch":   doc(`"sm_90"`, fmt.Sprintf(mod, "a", "cuda", cub("sm_90")+","+cub("sm_90"))),
		"bad cubin_archs":           doc(`"compute_90"`, fmt.Sprintf(mod, "a", "cuda", "")),
		"duplicate cubin_archs":     doc(`"sm_90","sm_90"`, fmt.Sprintf(mod, "a", "cuda", "")),
		"cubin without a file":      doc(`"sm_90"`, fmt.Sprintf(mod, "a", "cuda", `{"arch":"sm_90"}`)),
	} {
		_, err := ParseManifest([]byte(s))
		assert.Error(t, err, name)
	}
}

func TestCheckAcceptsCubinsBuiltBesideThePTX(t *testing.T) {
	dir, m := copyTree(t)
	addCubins(t, dir, m, "sm_80", "sm_90")
	assert.Empty(t, Check(dir, m))
	b, err := m.Encode()
	require.NoError(t, err)
	again, err := ParseManifest(b)
	require.NoError(t, err)
	assert.Equal(t, m, again)
}

func TestCheckFindsEveryKindOfCubinDrift(t *testing.T) {
	dir, m := copyTree(t)
	addCubins(t, dir, m, "sm_80", "sm_90")
	trace, err := m.Module("trace")
	require.NoError(t, err)
	c := trace.Cubins[1]
	// 1. a flipped byte in a stored cubin
	p := filepath.Join(dir, filepath.FromSlash(c.File))
	gz, _ := os.ReadFile(p)
	gz[len(gz)/2] ^= 0x04
	require.NoError(t, os.WriteFile(p, gz, 0o644))
	// 2. a cubin built beside another PTX, with another nvcc and flags
	vis, _ := m.Module("visibility")
	vis.Cubins[0].PTXSHA256 = strings.Repeat("0", 64)
	vis.Cubins[0].NVCC = "Cuda compilation tools, release 0.1, V0.1.0"
	vis.Cubins[0].Flags = []string{"-cubin", "-arch=sm_80"}
	// 3. a missing architecture and an extra file
	vjp, _ := m.Module("vjp")
	vjp.Cubins = vjp.Cubins[:1]
	require.NoError(t, os.WriteFile(filepath.Join(dir, CubinDir, "stray.sm_90.cubin.gz"), gz, 0o644))
	// 4. a manifest that vouches for another cubin inside an intact file
	ev, _ := m.Module("edge_vjp")
	ev.Cubins[0].ImageSHA256 = strings.Repeat("1", 64)
	// 5. a cubin on the OptiX module
	optix, _ := m.Module("optix_trace")
	optix.Cubins = []CubinRecord{{Arch: "sm_90", File: CubinFile("optix_trace", "sm_90")}}

	probs := strings.Join(Check(dir, m), "\n")
	assert.Contains(t, probs, "module trace: "+c.File+" changed: manifest sha256 "+c.SHA256)
	assert.Contains(t, probs, "module visibility: cubin sm_80 was built beside the PTX with sha256 "+strings.Repeat("0", 64))
	assert.Contains(t, probs, "module visibility: cubin sm_80 was built with \"Cuda compilation tools, release 0.1")
	assert.Contains(t, probs, "module visibility: cubin sm_80 flags [-cubin -arch=sm_80]")
	assert.Contains(t, probs, "module vjp: no cubin for sm_90, which cubin_archs lists")
	assert.Contains(t, probs, "extra file cubin/vjp.sm_90.cubin.gz: not in manifest.json")
	assert.Contains(t, probs, "extra file cubin/stray.sm_90.cubin.gz: not in manifest.json")
	assert.Contains(t, probs, "module edge_vjp: cubin/edge_vjp.sm_80.cubin.gz (decompressed) changed: manifest sha256 "+strings.Repeat("1", 64))
	assert.Contains(t, probs, "module optix_trace: an OptiX module has no cubins")
	assert.NotContains(t, probs, "module basic:")

	// 6. a stored file that is not a cubin (recorded as it is), and a
	// missing one
	bogus := mustCompress(t, []byte("text"))
	require.NoError(t, os.WriteFile(p, bogus, 0o644))
	trace.Cubins[1].Bytes, trace.Cubins[1].SHA256 = len(bogus), SHA256Hex(bogus)
	assert.Contains(t, strings.Join(Check(dir, m), "\n"), "not a CUDA ELF image")
	require.NoError(t, os.Remove(p))
	assert.Contains(t, strings.Join(Check(dir, m), "\n"), "no such file")
}

func mustCompress(t *testing.T, b []byte) []byte {
	t.Helper()
	gz, err := CompressCubin(b)
	require.NoError(t, err)
	return gz
}

// The loader is derived from the sources: an OptiX program includes the
// OptiX device header; check notices a record that says otherwise.
func TestLoaderFollowsTheSources(t *testing.T) {
	dir, m := copyTree(t)
	for i := range m.Modules {
		rec := m.Modules[i]
		require.NoError(t, Describe(dir, &rec))
		want := LoaderCUDA
		if rec.Name == "optix_trace" || rec.Name == "optix_instance" {
			want = LoaderOptiX
		}
		assert.Equal(t, want, rec.Loader, rec.Name)
	}
	tr, _ := m.Module("trace")
	tr.Loader = LoaderOptiX
	assert.Contains(t, strings.Join(Check(dir, m), "\n"), `module trace: loader "optix", but its sources make it "cuda"`)
}
