package benchmarks

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommittedManifestVerifies(t *testing.T) {
	m, err := ReadManifest("multi_device_manifest.json")
	require.NoError(t, err)
	require.NoError(t, m.Verify(repoRoot))

	assert.Equal(t, BenchmarkName, m.Benchmark)
	assert.Equal(t, SchemaVersion, m.SchemaVersion)
	assert.Equal(t, SchemaPath, m.Schema.Path)
	require.NotEmpty(t, m.Records)
	assert.Equal(t, PinnedRecord{
		Path:           "benchmarks/" + historicalPath,
		ProvenanceKind: ProvenanceHistorical,
		SHA256:         m.Records[0].SHA256,
	}, m.Records[0], "the historical baseline comes first")
	for _, r := range m.Records[1:] {
		assert.Equal(t, ProvenanceLive, r.ProvenanceKind, "%s: every other record is a live run", r.Path)
	}

	// The committed file is in WriteFile's form.
	out := filepath.Join(t.TempDir(), "manifest.json")
	require.NoError(t, m.WriteFile(out))
	want, err := os.ReadFile("multi_device_manifest.json")
	require.NoError(t, err)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// mismatches returns the *MismatchError leaves of a Verify error.
func mismatches(t *testing.T, err error) []*MismatchError {
	t.Helper()
	require.ErrorIs(t, err, ErrManifestMismatch)
	var out []*MismatchError
	var walk func(error)
	walk = func(e error) {
		if me, ok := e.(*MismatchError); ok {
			out = append(out, me)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
		}
	}
	walk(err)
	return out
}

func TestVerifyDetectsFlippedByte(t *testing.T) {
	root := copyTree(t)
	m, err := ReadManifest(filepath.Join(root, ManifestPath))
	require.NoError(t, err)
	require.NoError(t, m.Verify(root))

	rec := filepath.Join(root, "benchmarks", historicalPath)
	data, err := os.ReadFile(rec)
	require.NoError(t, err)
	flipped := bytes.Replace(data, []byte(`"single_ms": 19.09`), []byte(`"single_ms": 19.08`), 1)
	require.NotEqual(t, data, flipped)
	require.NoError(t, os.WriteFile(rec, flipped, 0o644))

	errs := mismatches(t, m.Verify(root))
	require.Len(t, errs, 1)
	assert.Equal(t, "sha256", errs[0].What)
	assert.Equal(t, "benchmarks/"+historicalPath, errs[0].Path)
	assert.Equal(t, m.Records[0].SHA256, errs[0].Want)
}

func TestVerifyDetectsSchemaChange(t *testing.T) {
	root := copyTree(t)
	m, err := ReadManifest(filepath.Join(root, ManifestPath))
	require.NoError(t, err)
	schema := filepath.Join(root, filepath.FromSlash(SchemaPath))
	data, err := os.ReadFile(schema)
	require.NoError(t, err)
	data[len(data)-2] = ' ' // the closing brace
	require.NoError(t, os.WriteFile(schema, data, 0o644))

	var whats []string
	for _, e := range mismatches(t, m.Verify(root)) {
		whats = append(whats, e.What)
	}
	assert.ElementsMatch(t, []string{"sha256", "embedded schema"}, whats)
}

func TestVerifyNamesCRLF(t *testing.T) {
	root := copyTree(t)
	m, err := ReadManifest(filepath.Join(root, ManifestPath))
	require.NoError(t, err)
	rec := filepath.Join(root, "benchmarks", historicalPath)
	data, err := os.ReadFile(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(rec, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o644))
	err = m.Verify(root)
	require.ErrorIs(t, err, ErrManifestMismatch)
	assert.Contains(t, err.Error(), "CRLF")
}

func TestVerifyDetectsKindAndSchemaFailures(t *testing.T) {
	root := copyTree(t)
	m, err := ReadManifest(filepath.Join(root, ManifestPath))
	require.NoError(t, err)

	wrongKind := *m
	wrongKind.Records = []PinnedRecord{m.Records[0]}
	wrongKind.Records[0].ProvenanceKind = ProvenanceLive
	errs := mismatches(t, wrongKind.Verify(root))
	require.Len(t, errs, 1)
	assert.Equal(t, "provenance_kind", errs[0].What)
	assert.Equal(t, ProvenanceHistorical, errs[0].Got)

	// A record the schema rejects, pinned with its own digest.
	bad := filepath.Join(root, "benchmarks", "results", "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema_version": 1}`+"\n"), 0o644))
	data, err := os.ReadFile(bad)
	require.NoError(t, err)
	invalid := *m
	invalid.Records = []PinnedRecord{{Path: "benchmarks/results/bad.json", ProvenanceKind: ProvenanceLive, SHA256: digest(data)}}
	err = invalid.Verify(root)
	assert.ErrorIs(t, err, ErrManifestMismatch)
	assert.ErrorIs(t, err, ErrInvalidRecord)

	missing := *m
	missing.Records = []PinnedRecord{{Path: "benchmarks/results/absent.json", SHA256: "00"}}
	err = missing.Verify(root)
	assert.ErrorIs(t, err, ErrManifestMismatch)
	assert.ErrorIs(t, err, os.ErrNotExist)

	escaping := *m
	escaping.Records = []PinnedRecord{{Path: "../outside.json"}}
	assert.ErrorIs(t, escaping.Verify(root), ErrManifestMismatch)
}

func TestPin(t *testing.T) {
	root := copyTree(t)
	m := NewManifest()
	require.NoError(t, m.Pin(root, "benchmarks/"+historicalPath))
	committed, err := ReadManifest(filepath.Join(root, ManifestPath))
	require.NoError(t, err)
	committed.Records = committed.Records[:1]
	assert.Equal(t, committed, m, "pinning the baseline into an empty manifest gives the committed one's first entry")

	live := filepath.Join(root, "benchmarks", "results", "live.json")
	require.NoError(t, WriteRecord(live, liveRecord()))
	require.NoError(t, m.Pin(root, filepath.Join("benchmarks", "results", "live.json")))
	require.Len(t, m.Records, 2)
	assert.Equal(t, "benchmarks/results/live.json", m.Records[1].Path)
	assert.Equal(t, ProvenanceLive, m.Records[1].ProvenanceKind)
	require.NoError(t, m.Verify(root))

	// Re-pinning after a change updates the entry in place.
	r := liveRecord()
	r.Provenance.GeneratedAt = "2026-11-30T00:00:00Z"
	require.NoError(t, WriteRecord(live, r))
	assert.ErrorIs(t, m.Verify(root), ErrManifestMismatch)
	require.NoError(t, m.Pin(root, "benchmarks/results/./live.json"))
	require.Len(t, m.Records, 2)
	require.NoError(t, m.Verify(root))

	// Failures leave the manifest unchanged.
	before := *m
	before.Records = append([]PinnedRecord(nil), m.Records...)
	require.NoError(t, os.WriteFile(filepath.Join(root, "benchmarks", "results", "bad.json"), []byte("{}\n"), 0o644))
	assert.ErrorIs(t, m.Pin(root, "benchmarks/results/bad.json"), ErrInvalidRecord)
	assert.Error(t, m.Pin(root, "../escape.json"))
	assert.Error(t, m.Pin(root, "/abs/path.json"))
	assert.ErrorIs(t, m.Pin(root, "benchmarks/results/absent.json"), os.ErrNotExist)
	assert.Equal(t, &before, m)

	// A schema file that is not the embedded one is refused.
	schema := filepath.Join(root, filepath.FromSlash(SchemaPath))
	require.NoError(t, os.WriteFile(schema, []byte("{}\n"), 0o644))
	assert.ErrorIs(t, m.Pin(root, "benchmarks/results/live.json"), ErrManifestMismatch)
}

func TestReadManifestRejects(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown field":  `{"benchmark":"rayd_multi_device","schema_version":1,"schema":{"path":"a","sha256":""},"records":[],"x":1}`,
		"wrong name":     `{"benchmark":"other","schema_version":1,"schema":{"path":"a","sha256":""},"records":[]}`,
		"wrong version":  `{"benchmark":"rayd_multi_device","schema_version":2,"schema":{"path":"a","sha256":""},"records":[]}`,
		"absolute path":  `{"benchmark":"rayd_multi_device","schema_version":1,"schema":{"path":"/a","sha256":""},"records":[]}`,
		"escaping path":  `{"benchmark":"rayd_multi_device","schema_version":1,"schema":{"path":"a","sha256":""},"records":[{"path":"../b"}]}`,
		"trailing value": `{"benchmark":"rayd_multi_device","schema_version":1,"schema":{"path":"a","sha256":""},"records":[]} {}`,
		"not json":       `[`,
	} {
		p := filepath.Join(dir, "m.json")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := ReadManifest(p)
		assert.Error(t, err, name)
	}
	_, err := ReadManifest(filepath.Join(dir, "absent.json"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
}
