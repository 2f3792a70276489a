package benchmarks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ManifestPath is the manifest's path relative to the repository root.
const ManifestPath = "benchmarks/multi_device_manifest.json"

// ErrManifestMismatch is wrapped by every error that reports a file that does
// not match its manifest entry.
var ErrManifestMismatch = errors.New("benchmark manifest mismatch")

// Manifest pins the record schema and the committed records by the SHA-256
// of their raw bytes (multidevice spec §10.9). Paths are slash-separated and
// relative to the repository root.
type Manifest struct {
	Benchmark     string         `json:"benchmark"`
	SchemaVersion int            `json:"schema_version"`
	Schema        PinnedFile     `json:"schema"`
	Records       []PinnedRecord `json:"records"`
}

// PinnedFile is a file and the hex SHA-256 of its bytes.
type PinnedFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// PinnedRecord is a committed record, its provenance kind and the hex
// SHA-256 of its bytes.
type PinnedRecord struct {
	Path           string `json:"path"`
	ProvenanceKind string `json:"provenance_kind"`
	SHA256         string `json:"sha256"`
}

// MismatchError is one file that does not match the manifest. It wraps
// ErrManifestMismatch and, where there is one, the underlying error (a
// *ValidationError for a record the schema rejects).
type MismatchError struct {
	// Path is the file's manifest path.
	Path string
	// What names the check: "sha256", "provenance_kind", "schema",
	// "embedded schema" or "read".
	What string
	// Want and Got are the pinned and found values, when they are values.
	Want, Got string
	// Err is the cause, when there is one.
	Err error
}

// Error describes the mismatch.
func (e *MismatchError) Error() string {
	msg := fmt.Sprintf("%s: %s %s", ErrManifestMismatch, e.Path, e.What)
	if e.Want != "" || e.Got != "" {
		msg += fmt.Sprintf(": pinned %q, found %q", e.Want, e.Got)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrManifestMismatch and the cause.
func (e *MismatchError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrManifestMismatch}
	}
	return []error{ErrManifestMismatch, e.Err}
}

// NewManifest returns an empty manifest for the record schema at SchemaPath;
// Pin fills it.
func NewManifest() *Manifest {
	return &Manifest{
		Benchmark:     BenchmarkName,
		SchemaVersion: SchemaVersion,
		Schema:        PinnedFile{Path: SchemaPath},
		Records:       []PinnedRecord{},
	}
}

// ReadManifest reads and checks the shape of a manifest file; Verify checks
// it against the files.
func ReadManifest(name string) (*Manifest, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("benchmarks: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("benchmarks: manifest %s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("benchmarks: manifest %s: data after the manifest object", name)
	}
	if m.Benchmark != BenchmarkName || m.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("benchmarks: manifest %s: benchmark %q schema version %d, want %q version %d",
			name, m.Benchmark, m.SchemaVersion, BenchmarkName, SchemaVersion)
	}
	if err := checkRelPath(m.Schema.Path); err != nil {
		return nil, fmt.Errorf("benchmarks: manifest %s: schema: %w", name, err)
	}
	for _, r := range m.Records {
		if err := checkRelPath(r.Path); err != nil {
			return nil, fmt.Errorf("benchmarks: manifest %s: record: %w", name, err)
		}
	}
	if m.Records == nil {
		m.Records = []PinnedRecord{}
	}
	return &m, nil
}

// WriteFile writes the manifest as JSON (indent 2) plus a newline.
func (m *Manifest) WriteFile(name string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("benchmarks: manifest: %w", err)
	}
	return writeFileAtomic(name, append(data, '\n'))
}

// Verify checks every pinned file under root: the schema's digest, that the
// schema file is the one this package embeds, and for every record its
// digest, its validity against the schema and its provenance kind. All
// mismatches are reported, joined; each is a *MismatchError.
func (m *Manifest) Verify(root string) error {
	var errs []error
	schema, err := readPinned(root, m.Schema.Path)
	if err != nil {
		errs = append(errs, err)
	} else {
		if got := digest(schema); got != m.Schema.SHA256 {
			errs = append(errs, digestMismatch(m.Schema.Path, m.Schema.SHA256, got, schema))
		}
		if !bytes.Equal(schema, schemaBytes) {
			errs = append(errs, &MismatchError{Path: m.Schema.Path, What: "embedded schema",
				Err: errors.New("the file differs from the schema this package validates with")})
		}
	}
	for _, r := range m.Records {
		data, err := readPinned(root, r.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got := digest(data); got != r.SHA256 {
			errs = append(errs, digestMismatch(r.Path, r.SHA256, got, data))
		}
		if err := Validate(data); err != nil {
			errs = append(errs, &MismatchError{Path: r.Path, What: "schema", Err: err})
			continue
		}
		if kind := provenanceKind(data); kind != r.ProvenanceKind {
			errs = append(errs, &MismatchError{Path: r.Path, What: "provenance_kind", Want: r.ProvenanceKind, Got: kind})
		}
	}
	return errors.Join(errs...)
}

// Pin adds or updates the entry of the record at rel (relative to root),
// reading its provenance kind from the file, and re-pins the schema. The
// record must validate and the schema file must be the embedded one; on an
// error the manifest is unchanged.
func (m *Manifest) Pin(root, rel string) error {
	rel = filepath.ToSlash(rel)
	if err := checkRelPath(rel); err != nil {
		return fmt.Errorf("benchmarks: pin: %w", err)
	}
	rel = path.Clean(rel)
	schemaPath := m.Schema.Path
	if schemaPath == "" {
		schemaPath = SchemaPath
	}
	schema, err := readPinned(root, schemaPath)
	if err != nil {
		return err
	}
	if !bytes.Equal(schema, schemaBytes) {
		return &MismatchError{Path: schemaPath, What: "embedded schema",
			Err: errors.New("the file differs from the schema this package validates with")}
	}
	data, err := readPinned(root, rel)
	if err != nil {
		return err
	}
	if err := Validate(data); err != nil {
		return fmt.Errorf("benchmarks: pin %s: %w", rel, err)
	}
	entry := PinnedRecord{Path: rel, ProvenanceKind: provenanceKind(data), SHA256: digest(data)}
	m.Benchmark, m.SchemaVersion = BenchmarkName, SchemaVersion
	m.Schema = PinnedFile{Path: schemaPath, SHA256: digest(schema)}
	for i := range m.Records {
		if path.Clean(m.Records[i].Path) == rel {
			m.Records[i] = entry
			return nil
		}
	}
	m.Records = append(m.Records, entry)
	return nil
}

// checkRelPath accepts a non-empty, slash-separated path that stays inside
// the root.
func checkRelPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case path.IsAbs(p) || filepath.IsAbs(p) || strings.Contains(p, `\`):
		return fmt.Errorf("path %q is not slash-separated and relative to the repository root", p)
	case !filepath.IsLocal(filepath.FromSlash(p)):
		return fmt.Errorf("path %q leaves the repository root", p)
	}
	return nil
}

// readPinned reads a manifest path under root.
func readPinned(root, rel string) ([]byte, error) {
	if err := checkRelPath(rel); err != nil {
		return nil, &MismatchError{Path: rel, What: "read", Err: err}
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, &MismatchError{Path: rel, What: "read", Err: err}
	}
	return data, nil
}

// digest is the lower-case hex SHA-256 of data.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// digestMismatch reports a wrong digest, naming CRLF line endings when the
// file has them (the pinned digests are of LF files).
func digestMismatch(p, want, got string, data []byte) error {
	e := &MismatchError{Path: p, What: "sha256", Want: want, Got: got}
	if bytes.Contains(data, []byte("\r\n")) {
		e.Err = errors.New("the file has CRLF line endings; the pinned digests are of LF files")
	}
	return e
}

// provenanceKind reads provenance.kind from a record ("" if absent).
func provenanceKind(data []byte) string {
	var r struct {
		Provenance struct {
			Kind string `json:"kind"`
		} `json:"provenance"`
	}
	if json.Unmarshal(data, &r) != nil {
		return ""
	}
	return r.Provenance.Kind
}
