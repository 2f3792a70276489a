package ptx

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
)

// CubinDir is the directory, relative to the ptx directory, that holds the
// prebuilt cubins.
const CubinDir = "cubin"

// DefaultCubinArchs are the architectures `ptxdigest build` compiles
// cubins for unless told otherwise: A100 (sm_80), the Ampere workstation
// and consumer parts (sm_86), Ada (sm_89) and Hopper (sm_90).
var DefaultCubinArchs = []string{"sm_80", "sm_86", "sm_89", "sm_90"}

// ErrNoCubin is returned when a module has no cubin for an architecture.
var ErrNoCubin = errors.New("ptx: no cubin")

// CubinRecord is the provenance of one prebuilt cubin of a module: nvcc
// compiled the module's source with the PTX's flags, -ptx replaced by -cubin
// and -arch=compute_XX by -arch=<Arch> (CubinFlags), in the same run that
// generated the PTX. The file is the cubin compressed with gzip; both the
// file and the cubin inside are digest-checked at load.
type CubinRecord struct {
	Arch        string   `json:"arch"`         // sm_XX: runs on devices of compute capability X.X
	File        string   `json:"file"`         // gzip file, relative to the ptx directory (CubinFile)
	Bytes       int      `json:"bytes"`        // size of File
	SHA256      string   `json:"sha256"`       // SHA-256 of File
	ImageBytes  int      `json:"image_bytes"`  // size of the cubin (decompressed)
	ImageSHA256 string   `json:"image_sha256"` // SHA-256 of the cubin: the bytes the driver loads
	PTXSHA256   string   `json:"ptx_sha256"`   // SHA-256 of the PTX generated in the same run
	NVCC        string   `json:"nvcc"`         // nvcc --version's release line
	Flags       []string `json:"flags"`
	Target      string   `json:"target"` // nvcc's -arch: equal to Arch
}

// Cubin is a verified, decompressed cubin ready to hand to the driver.
type Cubin struct {
	Module *ModuleRecord // the module's provenance and entry layouts
	Record *CubinRecord  // the cubin's provenance
	Image  []byte        // the cubin (an ELF image)
}

var archRE = regexp.MustCompile(`^sm_([0-9]{2,3})([af]?)$`)

// Arch returns the architecture name of compute capability major.minor,
// e.g. "sm_90" for 9.0.
func Arch(major, minor int) string { return fmt.Sprintf("sm_%d%d", major, minor) }

// ParseArch splits an architecture name such as "sm_86" or "sm_90a" into
// its number (86, 90) and whether it is architecture-specific (an "a" or
// "f" suffix: code that runs only on that architecture's family).
func ParseArch(s string) (num int, specific, ok bool) {
	m := archRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false, false
	}
	n, err := strconv.Atoi(m[1])
	return n, m[2] != "", err == nil
}

// CubinFile is where the cubin of module for arch is stored, relative to
// the ptx directory: cubin/<module>.<arch>.cubin.gz.
func CubinFile(module, arch string) string {
	return CubinDir + "/" + module + "." + arch + ".cubin.gz"
}

// CubinFlags derives the nvcc flags of a module's cubin for arch from the
// flags of its PTX: -ptx becomes -cubin and -arch=... becomes -arch=<arch>;
// every other flag is kept, in order.
func CubinFlags(ptxFlags []string, arch string) []string {
	out := make([]string, 0, len(ptxFlags)+2)
	sawMode, sawArch := false, false
	for _, f := range ptxFlags {
		switch {
		case f == "-ptx":
			out, sawMode = append(out, "-cubin"), true
		case len(f) > len("-arch=") && f[:len("-arch=")] == "-arch=":
			out, sawArch = append(out, "-arch="+arch), true
		default:
			out = append(out, f)
		}
	}
	if !sawArch {
		out = append([]string{"-arch=" + arch}, out...)
	}
	if !sawMode {
		out = append([]string{"-cubin"}, out...)
	}
	return out
}

// CompressCubin is the storage form of a cubin: gzip at the best
// compression, without a name or time in the header, so that one Go release
// always writes the same bytes for the same cubin.
func CompressCubin(img []byte) ([]byte, error) {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(img); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// maxCubinBytes bounds the decompression of a cubin whose size is not yet
// known (ptxdigest update): far above any kernel module.
const maxCubinBytes = 256 << 20

// DecompressCubin returns the cubin inside a stored (gzip) file; at most
// limit bytes are produced (a larger content is an error), limit ≤ 0
// meaning 256 MiB.
func DecompressCubin(gz []byte, limit int) ([]byte, error) {
	size := limit + 1 // the expected size: one allocation
	if limit <= 0 {
		limit, size = maxCubinBytes, 4*len(gz)
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := bytes.NewBuffer(make([]byte, 0, min(size, maxCubinBytes+1)))
	if _, err := io.Copy(out, io.LimitReader(r, int64(limit)+1)); err != nil {
		return nil, err
	}
	if out.Len() > limit {
		return nil, fmt.Errorf("decompressed cubin exceeds %d bytes", limit)
	}
	return out.Bytes(), nil
}

// LoadCubin returns the embedded cubin of module name for arch after
// checking the digests of the stored file and of the cubin inside.
func LoadCubin(name, arch string) (*Cubin, error) {
	m, err := EmbeddedManifest()
	if err != nil {
		return nil, err
	}
	return LoadCubinFS(embedded, m, name, arch)
}

// LoadCubinFS reads the cubin of module name for arch from fsys (laid out
// like this package) and verifies the size and SHA-256 of the stored file,
// then of the decompressed cubin; a mismatch of either is a *DigestError
// naming both digests (ErrDigestMismatch). A module without a cubin for
// arch is ErrNoCubin.
func LoadCubinFS(fsys fs.FS, m *Manifest, name, arch string) (*Cubin, error) {
	rec, err := m.Module(name)
	if err != nil {
		return nil, err
	}
	c, ok := rec.Cubin(arch)
	if !ok {
		return nil, fmt.Errorf("%w for module %s on %s", ErrNoCubin, name, arch)
	}
	gz, err := fs.ReadFile(fsys, c.File)
	if err != nil {
		return nil, fmt.Errorf("ptx: module %s: %w", name, err)
	}
	if got := SHA256Hex(gz); got != c.SHA256 || len(gz) != c.Bytes {
		return nil, &DigestError{Module: name, File: c.File, Manifest: c.SHA256, Actual: got}
	}
	img, err := DecompressCubin(gz, c.ImageBytes)
	if err != nil {
		return nil, fmt.Errorf("ptx: module %s (%s): %w", name, c.File, err)
	}
	if got := SHA256Hex(img); got != c.ImageSHA256 || len(img) != c.ImageBytes {
		return nil, &DigestError{Module: name, File: c.File + " (decompressed)", Manifest: c.ImageSHA256, Actual: got}
	}
	return &Cubin{Module: rec, Record: c, Image: img}, nil
}

// validateCubins checks the structure of the manifest's cubin records:
// well-formed, distinct architectures, every cubin's among CubinArchs, and
// none on an OptiX module.
func validateCubins(m *Manifest) error {
	for i, a := range m.CubinArchs {
		if n, specific, ok := ParseArch(a); !ok || specific || n == 0 {
			return fmt.Errorf("ptx: manifest cubin_archs: %q is not an architecture (sm_XX)", a)
		}
		if slices.Contains(m.CubinArchs[:i], a) {
			return fmt.Errorf("ptx: manifest cubin_archs: %s listed twice", a)
		}
	}
	for _, mod := range m.Modules {
		if mod.Loader == LoaderOptiX && len(mod.Cubins) > 0 {
			return fmt.Errorf("ptx: manifest module %s: an OptiX module has no cubins (OptiX compiles PTX)", mod.Name)
		}
		for j, c := range mod.Cubins {
			if !slices.Contains(m.CubinArchs, c.Arch) {
				return fmt.Errorf("ptx: manifest module %s: cubin arch %q is not in cubin_archs %v", mod.Name, c.Arch, m.CubinArchs)
			}
			if c.File == "" {
				return fmt.Errorf("ptx: manifest module %s: cubin %s: file is required", mod.Name, c.Arch)
			}
			for _, prev := range mod.Cubins[:j] {
				if prev.Arch == c.Arch {
					return fmt.Errorf("ptx: manifest module %s: two cubins for %s", mod.Name, c.Arch)
				}
			}
		}
	}
	return nil
}
