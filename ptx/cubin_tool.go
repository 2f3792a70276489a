package ptx

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// emCUDA is the ELF machine of NVIDIA cubins (EM_CUDA).
const emCUDA = 190

// isCUDAELF reports whether img starts like a cubin: an ELF header whose
// machine is EM_CUDA.
func isCUDAELF(img []byte) bool {
	return len(img) >= 20 && string(img[:4]) == "\x7fELF" && binary.LittleEndian.Uint16(img[18:20]) == emCUDA
}

// DescribeCubin computes the derived fields of c from its file in dir: the
// stored file's size and SHA-256 and the decompressed cubin's. The cubin
// must be a CUDA ELF image. It keeps the architecture, PTX digest, nvcc
// version, flags and target.
func DescribeCubin(dir string, c *CubinRecord) error {
	gz, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(c.File)))
	if err != nil {
		return fmt.Errorf("cubin %s: %w", c.Arch, err)
	}
	img, err := DecompressCubin(gz, 0)
	if err != nil {
		return fmt.Errorf("cubin %s (%s): %w", c.Arch, c.File, err)
	}
	if !isCUDAELF(img) {
		return fmt.Errorf("cubin %s (%s): not a CUDA ELF image", c.Arch, c.File)
	}
	c.Bytes, c.SHA256 = len(gz), SHA256Hex(gz)
	c.ImageBytes, c.ImageSHA256 = len(img), SHA256Hex(img)
	return nil
}

// checkCubins compares the cubins of rec with the files in dir and with
// the manifest's architectures: one readable line per problem.
func checkCubins(dir string, m *Manifest, rec ModuleRecord) []string {
	var probs []string
	add := func(format string, args ...any) {
		probs = append(probs, fmt.Sprintf("module %s: ", rec.Name)+fmt.Sprintf(format, args...))
	}
	if rec.Loader == LoaderOptiX {
		if len(rec.Cubins) > 0 {
			add("an OptiX module has no cubins (OptiX compiles PTX), %d recorded", len(rec.Cubins))
		}
		return probs
	}
	for _, a := range m.CubinArchs {
		if _, ok := rec.Cubin(a); !ok {
			add("no cubin for %s, which cubin_archs lists (run make ptx)", a)
		}
	}
	for _, c := range rec.Cubins {
		probs = append(probs, checkCubinFile(dir, rec.Name, c)...)
		if c.File != CubinFile(rec.Name, c.Arch) {
			add("cubin %s is stored as %s, want %s", c.Arch, c.File, CubinFile(rec.Name, c.Arch))
		}
		if c.PTXSHA256 != rec.SHA256 {
			add("cubin %s was built beside the PTX with sha256 %s, but the manifest's PTX is %s (run make ptx)", c.Arch, c.PTXSHA256, rec.SHA256)
		}
		switch {
		case c.NVCC == "":
			add("cubin %s: no nvcc version recorded", c.Arch)
		case c.NVCC != rec.NVCC:
			add("cubin %s was built with %q, the PTX with %q (run make ptx)", c.Arch, c.NVCC, rec.NVCC)
		}
		if want := CubinFlags(rec.Flags, c.Arch); !slices.Equal(c.Flags, want) {
			add("cubin %s flags %v, want the PTX's flags for %s: %v", c.Arch, c.Flags, c.Arch, want)
		}
		if c.Target != c.Arch {
			add("cubin %s: target %q", c.Arch, c.Target)
		}
	}
	return probs
}

// checkCubinFile compares the stored file of c, then the cubin inside,
// with the digests the manifest records.
func checkCubinFile(dir, module string, c CubinRecord) []string {
	gz, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(c.File)))
	if err != nil {
		return []string{fmt.Sprintf("module %s: cubin %s: %v", module, c.Arch, err)}
	}
	if got := SHA256Hex(gz); got != c.SHA256 || len(gz) != c.Bytes {
		return []string{fmt.Sprintf("module %s: %s changed: manifest sha256 %s (%d bytes), file sha256 %s (%d bytes)",
			module, c.File, c.SHA256, c.Bytes, got, len(gz))}
	}
	fresh := c
	if err := DescribeCubin(dir, &fresh); err != nil {
		return []string{fmt.Sprintf("module %s: %v", module, err)}
	}
	if fresh.ImageSHA256 != c.ImageSHA256 || fresh.ImageBytes != c.ImageBytes {
		return []string{fmt.Sprintf("module %s: %s (decompressed) changed: manifest sha256 %s (%d bytes), file sha256 %s (%d bytes)",
			module, c.File, c.ImageSHA256, c.ImageBytes, fresh.ImageSHA256, fresh.ImageBytes)}
	}
	return nil
}

// extraCubinFiles lists the files of the cubin directory that no module
// records (the directory's README.md aside).
func extraCubinFiles(dir string, listed map[string]bool) []string {
	entries, err := os.ReadDir(filepath.Join(dir, CubinDir))
	if err != nil {
		return nil // no cubin directory: nothing extra
	}
	var probs []string
	for _, e := range entries {
		rel := CubinDir + "/" + e.Name()
		if e.Name() == "README.md" || listed[rel] {
			continue
		}
		probs = append(probs, fmt.Sprintf("extra file %s: not in manifest.json", rel))
	}
	return probs
}
