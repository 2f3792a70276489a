package ptx

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// SchemaVersion is the manifest.json format version: 2 added the prebuilt
// cubins (cubin_archs, and per module loader and cubins).
const SchemaVersion = 2

// Manifest is the contents of manifest.json.
type Manifest struct {
	SchemaVersion int `json:"schema_version"`
	// CubinArchs are the architectures (sm_XX) every module of LoaderCUDA
	// has a prebuilt cubin for; empty when no cubins are built.
	CubinArchs []string       `json:"cubin_archs"`
	Modules    []ModuleRecord `json:"modules"`
}

// SourceRecord is one source or header a module was built from.
type SourceRecord struct {
	Path   string `json:"path"` // relative to the ptx directory, e.g. src/trace.cu
	SHA256 string `json:"sha256"`
}

// Loaders of a module: who turns its PTX into device code.
const (
	// LoaderCUDA modules are loaded with cuModuleLoadDataEx: from a
	// prebuilt cubin when one matches the device, else from the PTX (JIT).
	LoaderCUDA = "cuda"
	// LoaderOptiX modules are OptiX programs, compiled by optixModuleCreate
	// from the PTX; OptiX takes no cubins, so they have none.
	LoaderOptiX = "optix"
)

// ModuleRecord is the provenance of one PTX module and of its cubins.
type ModuleRecord struct {
	Name        string         `json:"name"`   // module name used by Load, e.g. "trace"
	File        string         `json:"file"`   // PTX file, relative to the ptx directory
	Source      string         `json:"source"` // the .cu file nvcc compiles
	Bytes       int            `json:"bytes"`
	SHA256      string         `json:"sha256"`
	Sources     []SourceRecord `json:"sources"` // Source and every header it includes, sorted
	NVCC        string         `json:"nvcc"`    // nvcc --version's release line
	Flags       []string       `json:"flags"`
	Target      string         `json:"target"`  // PTX .target
	PTXISA      string         `json:"ptx_isa"` // PTX .version
	AddressSize int            `json:"address_size"`
	// Loader is LoaderCUDA or LoaderOptiX, derived from the sources: a
	// module that includes OptiXHeader is an OptiX program.
	Loader string `json:"loader"`
	// Cubins are the module's prebuilt cubins, one per architecture of the
	// manifest's CubinArchs (none for LoaderOptiX), sorted by Arch.
	Cubins  []CubinRecord `json:"cubins"`
	Entries []Entry       `json:"entries"`
}

// Cubin returns the module's cubin for arch (e.g. "sm_90").
func (m *ModuleRecord) Cubin(arch string) (*CubinRecord, bool) {
	for i := range m.Cubins {
		if m.Cubins[i].Arch == arch {
			return &m.Cubins[i], true
		}
	}
	return nil, false
}

// Entry returns the named entry point.
func (m *ModuleRecord) Entry(name string) (Entry, bool) {
	for _, e := range m.Entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// ErrDigestMismatch is returned when a PTX image does not hash to the digest
// its manifest records.
var ErrDigestMismatch = errors.New("ptx: digest mismatch")

// ErrUnknownModule is returned for a module name the manifest lacks.
var ErrUnknownModule = errors.New("ptx: unknown module")

// DigestError names the module, the file and both digests.
type DigestError struct {
	Module   string
	File     string // the PTX or cubin file; a decompressed cubin is "<file> (decompressed)"
	Manifest string // digest recorded in manifest.json
	Actual   string // digest of the bytes found
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("ptx: module %s (%s): SHA-256 mismatch: manifest %s, file %s", e.Module, e.File, e.Manifest, e.Actual)
}

// Is matches ErrDigestMismatch.
func (e *DigestError) Is(target error) bool { return target == ErrDigestMismatch }

// SHA256Hex returns the lower-case hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ParseManifest decodes and sanity-checks manifest.json.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("ptx: manifest: %w", err)
	}
	if m.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("ptx: manifest schema_version %d, want %d", m.SchemaVersion, SchemaVersion)
	}
	seen := map[string]bool{}
	for i, mod := range m.Modules {
		if mod.Name == "" || mod.File == "" {
			return nil, fmt.Errorf("ptx: manifest module %d: name and file are required", i)
		}
		if seen[mod.Name] {
			return nil, fmt.Errorf("ptx: manifest: duplicate module %q", mod.Name)
		}
		seen[mod.Name] = true
		if mod.Loader != LoaderCUDA && mod.Loader != LoaderOptiX {
			return nil, fmt.Errorf("ptx: manifest module %s: loader %q (want %q or %q)", mod.Name, mod.Loader, LoaderCUDA, LoaderOptiX)
		}
		if mod.Cubins == nil {
			m.Modules[i].Cubins = []CubinRecord{}
		}
	}
	if m.CubinArchs == nil {
		m.CubinArchs = []string{}
	}
	if err := validateCubins(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Module returns the record of the named module.
func (m *Manifest) Module(name string) (*ModuleRecord, error) {
	for i := range m.Modules {
		if m.Modules[i].Name == name {
			return &m.Modules[i], nil
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownModule, name)
}

// Encode renders the manifest as indented JSON with a trailing newline.
func (m *Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
