package ptx

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// DefaultFlags are the nvcc flags of a module that does not name its own.
var DefaultFlags = []string{"-ptx", "-arch=compute_90", "-O3", "-std=c++17"}

var includeRE = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)

// SourceClosure returns source and every header it includes with #include
// "...", transitively, as sorted paths relative to dir.
func SourceClosure(dir, source string) ([]string, error) {
	seen := map[string]bool{}
	var walk func(rel string) error
	walk = func(rel string) error {
		rel = path.Clean(rel)
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("ptx: source %s: %w", rel, err)
		}
		for _, m := range includeRE.FindAllSubmatch(b, -1) {
			if err := walk(path.Join(path.Dir(rel), string(m[1]))); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(source); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// OptiXHeader is the header of the OptiX device API that OptiX programs
// include: a module whose sources include it is LoaderOptiX.
const OptiXHeader = "optix_device.cuh"

// Describe computes every derived field of rec from the files in dir: PTX size
// and digest, header, entry layouts (with parameter names and pointer-ness
// from the CUDA source), the digests of the source closure, the loader, and
// the sizes and digests of the recorded cubins (DescribeCubin). It keeps the
// recorded nvcc version and flags, and each cubin's architecture, PTX
// digest, nvcc version and flags.
func Describe(dir string, rec *ModuleRecord) error {
	img, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rec.File)))
	if err != nil {
		return fmt.Errorf("ptx: module %s: %w", rec.Name, err)
	}
	h, entries, err := ParsePTX(img)
	if err != nil {
		return fmt.Errorf("ptx: module %s: %w", rec.Name, err)
	}
	srcs, err := SourceClosure(dir, rec.Source)
	if err != nil {
		return err
	}
	rec.Sources = rec.Sources[:0]
	rec.Loader = LoaderCUDA
	for _, s := range srcs {
		if path.Base(s) == OptiXHeader {
			rec.Loader = LoaderOptiX
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s)))
		if err != nil {
			return err
		}
		rec.Sources = append(rec.Sources, SourceRecord{Path: s, SHA256: SHA256Hex(b)})
	}
	mainSrc, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rec.Source)))
	if err != nil {
		return err
	}
	sigs := ParseKernelSignatures(mainSrc)
	for i := range entries {
		sig, ok := sigs[entries[i].Name]
		if !ok || len(sig) != len(entries[i].Params) {
			return fmt.Errorf("ptx: module %s: entry %s: CUDA signature not found in %s or parameter count differs", rec.Name, entries[i].Name, rec.Source)
		}
		for j := range entries[i].Params {
			entries[i].Params[j].Name = sig[j].Name
			entries[i].Params[j].Pointer = sig[j].Pointer
		}
	}
	rec.Bytes, rec.SHA256 = len(img), SHA256Hex(img)
	rec.Target, rec.PTXISA, rec.AddressSize, rec.Entries = h.Target, h.ISA, h.AddressSize, entries
	if len(rec.Flags) == 0 {
		rec.Flags = append([]string(nil), DefaultFlags...)
	}
	if rec.Cubins == nil {
		rec.Cubins = []CubinRecord{}
	}
	for i := range rec.Cubins {
		if err := DescribeCubin(dir, &rec.Cubins[i]); err != nil {
			return fmt.Errorf("ptx: module %s: %w", rec.Name, err)
		}
	}
	return nil
}

// Check compares manifest m with the files in dir and returns one readable
// line per problem: changed PTX or cubins (stored file or the cubin inside),
// a source changed without regenerated PTX, stale entry layouts or loader,
// a missing cubin of an architecture of cubin_archs, a cubin not built
// beside the recorded PTX, and missing or extra .ptx and cubin files. No
// problems means the committed PTX and cubins are exactly what the manifest
// vouches for.
func Check(dir string, m *Manifest) []string {
	var probs []string
	listed := map[string]bool{}
	for i := range m.Modules {
		rec := m.Modules[i]
		listed[rec.File] = true
		for _, c := range rec.Cubins {
			listed[c.File] = true
		}
		probs = append(probs, checkCubins(dir, m, rec)...)
		fresh := rec
		fresh.Sources, fresh.Cubins = nil, nil
		if err := Describe(dir, &fresh); err != nil {
			probs = append(probs, err.Error())
			continue
		}
		if fresh.SHA256 != rec.SHA256 || fresh.Bytes != rec.Bytes {
			probs = append(probs, fmt.Sprintf("module %s: %s changed: manifest sha256 %s (%d bytes), file sha256 %s (%d bytes)",
				rec.Name, rec.File, rec.SHA256, rec.Bytes, fresh.SHA256, fresh.Bytes))
		}
		probs = append(probs, diffSources(rec, fresh.Sources)...)
		if fmt.Sprint(fresh.Entries) != fmt.Sprint(rec.Entries) || fresh.Target != rec.Target || fresh.PTXISA != rec.PTXISA {
			probs = append(probs, fmt.Sprintf("module %s: entry layouts or header differ from %s (run ptxdigest update)", rec.Name, rec.File))
		}
		if fresh.Loader != rec.Loader {
			probs = append(probs, fmt.Sprintf("module %s: loader %q, but its sources make it %q (run ptxdigest update)", rec.Name, rec.Loader, fresh.Loader))
		}
		if rec.NVCC == "" {
			probs = append(probs, fmt.Sprintf("module %s: no nvcc version recorded", rec.Name))
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.ptx"))
	for _, f := range files {
		if base := filepath.Base(f); !listed[base] {
			probs = append(probs, fmt.Sprintf("extra file %s: not in manifest.json", base))
		}
	}
	return append(probs, extraCubinFiles(dir, listed)...)
}

func diffSources(rec ModuleRecord, fresh []SourceRecord) []string {
	var probs []string
	old := map[string]string{}
	for _, s := range rec.Sources {
		old[s.Path] = s.SHA256
	}
	for _, s := range fresh {
		want, ok := old[s.Path]
		switch {
		case !ok:
			probs = append(probs, fmt.Sprintf("module %s: source %s is included but not recorded (regenerate the PTX)", rec.Name, s.Path))
		case want != s.SHA256:
			probs = append(probs, fmt.Sprintf("module %s: source %s changed since the PTX was generated: manifest sha256 %s, file sha256 %s (run make ptx)",
				rec.Name, s.Path, want, s.SHA256))
		}
		delete(old, s.Path)
	}
	var gone []string
	for p := range old {
		gone = append(gone, p)
	}
	sort.Strings(gone)
	for _, p := range gone {
		probs = append(probs, fmt.Sprintf("module %s: recorded source %s is no longer part of the build", rec.Name, p))
	}
	return probs
}

// NVCCRelease extracts the release line from `nvcc --version` output.
func NVCCRelease(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "release") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(out)
}
