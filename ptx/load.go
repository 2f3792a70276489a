package ptx

import (
	"embed"
	"fmt"
	"io/fs"
	"sync"
)

//go:embed manifest.json *.ptx cubin
var embedded embed.FS

// Module is a verified PTX image ready to hand to the driver.
type Module struct {
	Record *ModuleRecord // provenance and entry layouts
	Image  []byte        // PTX text (not NUL-terminated)
}

var (
	manifestOnce sync.Once
	manifest     *Manifest
	manifestErr  error
)

// EmbeddedManifest returns the manifest compiled into the binary.
func EmbeddedManifest() (*Manifest, error) {
	manifestOnce.Do(func() {
		b, err := embedded.ReadFile("manifest.json")
		if err != nil {
			manifestErr = err
			return
		}
		manifest, manifestErr = ParseManifest(b)
	})
	return manifest, manifestErr
}

// Load returns the embedded module name after recomputing its digest.
func Load(name string) (*Module, error) {
	m, err := EmbeddedManifest()
	if err != nil {
		return nil, err
	}
	return LoadFS(embedded, m, name)
}

// LoadFS reads module name of manifest m from fsys (a directory laid out like
// this package: the PTX files at the paths the manifest names) and verifies its
// size and SHA-256; a mismatch is a *DigestError naming both digests.
func LoadFS(fsys fs.FS, m *Manifest, name string) (*Module, error) {
	rec, err := m.Module(name)
	if err != nil {
		return nil, err
	}
	img, err := fs.ReadFile(fsys, rec.File)
	if err != nil {
		return nil, fmt.Errorf("ptx: module %s: %w", name, err)
	}
	if got := SHA256Hex(img); got != rec.SHA256 || len(img) != rec.Bytes {
		return nil, &DigestError{Module: name, File: rec.File, Manifest: rec.SHA256, Actual: got}
	}
	return &Module{Record: rec, Image: img}, nil
}

// ManifestSHA256 returns the SHA-256 of the embedded manifest.json: one
// digest that pins every PTX module compiled into the binary (benchmark
// records and headers echo it).
func ManifestSHA256() (string, error) {
	b, err := embedded.ReadFile("manifest.json")
	if err != nil {
		return "", err
	}
	return SHA256Hex(b), nil
}
