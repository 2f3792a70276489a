package benchmarks

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaFileIsEmbeddedAndWellFormed(t *testing.T) {
	onDisk, err := os.ReadFile("multi_device_result.schema.json")
	require.NoError(t, err)
	assert.Equal(t, onDisk, SchemaBytes(), "the embedded schema is the committed file")
	assert.NotContains(t, string(onDisk), "\r", "LF line endings")
	assert.True(t, bytes.HasSuffix(onDisk, []byte("}\n")), "one trailing newline")

	var doc map[string]any
	require.NoError(t, json.Unmarshal(onDisk, &doc))
	assert.Equal(t, SchemaID, doc["$id"])
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"])

	b := SchemaBytes()
	b[0] = 'x'
	assert.Equal(t, onDisk, SchemaBytes(), "SchemaBytes returns a copy")
}

// TestSchemaCoversRecordFields keeps the schema and record.go in step:
// every JSON field of every record type is a property of its schema object.
func TestSchemaCoversRecordFields(t *testing.T) {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(SchemaBytes(), &doc))
	defs := doc["$defs"].(map[string]any)
	props := func(def string) map[string]any {
		if def == "" {
			return doc["properties"].(map[string]any)
		}
		d := defs[def].(map[string]any)
		if one, ok := d["oneOf"].([]any); ok {
			d = one[0].(map[string]any)
		}
		return d["properties"].(map[string]any)
	}
	for typ, def := range map[reflect.Type]string{
		reflect.TypeFor[Record]():      "",
		reflect.TypeFor[Provenance]():  "provenance",
		reflect.TypeFor[Parameters]():  "parameters",
		reflect.TypeFor[Machine]():     "machine",
		reflect.TypeFor[DeviceInfo]():  "device",
		reflect.TypeFor[PeerAccess]():  "peer_access",
		reflect.TypeFor[PeerPair]():    "peer_pair",
		reflect.TypeFor[Link]():        "link",
		reflect.TypeFor[Config]():      "config",
		reflect.TypeFor[Row]():         "row",
		reflect.TypeFor[Scale]():       "scale",
		reflect.TypeFor[Overlap]():     "overlap",
		reflect.TypeFor[Margin]():      "margin",
		reflect.TypeFor[PeakMemory]():  "peak_memory",
		reflect.TypeFor[DeviceBytes](): "device_bytes",
	} {
		p := props(def)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			assert.Contains(t, p, name, "%s.%s is not in the schema's %q", typ.Name(), f.Name, def)
		}
		assert.Len(t, p, typ.NumField(), "the schema's %q has properties %s does not marshal", def, typ.Name())
	}
}

func TestHistoricalRecordIsValidAndCanonical(t *testing.T) {
	r, data := loadHistorical(t)
	require.NoError(t, Validate(data))
	require.NoError(t, r.Validate())

	canonical, err := marshalRecord(r)
	require.NoError(t, err)
	assert.Equal(t, string(canonical)+"\n", string(data), "the file is in WriteRecord's form")

	assert.Equal(t, ProvenanceHistorical, r.Provenance.Kind)
	assert.Equal(t, "2026-07-27", r.Provenance.MeasuredAt)
	assert.Len(t, r.Provenance.SourceDocuments, 2)
	assert.Contains(t, r.Provenance.Statement, "not a new execution")
	assert.Equal(t, PeerPartiallyRecorded, r.Machine.PeerAccess.Status)
	assert.Nil(t, r.Machine.PeerAccess.AllPairsAccessible)
	assert.Equal(t, []PeerPair{{0, 1, true}}, r.Machine.PeerAccess.Pairs)
	assert.Equal(t, 49.1, r.Machine.D2DGBps)
	for name, c := range r.Configs {
		require.NotNil(t, c.IntersectOffload, name)
		assert.Equal(t, &PeakMemory{Status: PeakNotRecorded}, c.IntersectOffload.PeakMemory)
	}
	light, compute := r.Configs["light"], r.Configs["compute"]
	assert.Equal(t, 6.5e-08, *light.AccumDfrDirect.RelativeGridDeviation)
	assert.Equal(t, 2.9e-07, *compute.AccumDfrDirect.RelativeGridDeviation)
	assert.Equal(t, []float64{0.487, 0}, light.IntersectCalibrated.Weights)
	assert.Equal(t, 19.09, compute.Intersect.SingleMS)
}

func TestSyntheticLiveRecordsAreValid(t *testing.T) {
	require.NoError(t, liveRecord().Validate())
	single := singleDeviceRecord()
	require.Nil(t, single.Machine.PeerAccess.Pairs)
	require.NoError(t, single.Validate(), "a nil pair list is written as []")
}

func TestSchemaRejects(t *testing.T) {
	_, data := loadHistorical(t)
	cases := []struct {
		name, pointer string
		edit          func(doc map[string]any)
	}{
		{"extra top-level key", "", func(d map[string]any) { d["extra"] = 1 }},
		{"bad generated_at", "/provenance/generated_at", func(d map[string]any) {
			obj(d, "provenance")["generated_at"] = "2026-11-29 00:00:00"
		}},
		{"generated_at not UTC", "/provenance/generated_at", func(d map[string]any) {
			obj(d, "provenance")["generated_at"] = "2026-11-29T00:00:00+01:00"
		}},
		{"not_applicable with pairs", "/machine/peer_access/pairs", func(d map[string]any) {
			obj(d, "machine", "peer_access")["status"] = "not_applicable"
		}},
		{"negative speedup", "/configs/light/intersect/speedup", func(d map[string]any) {
			obj(d, "configs", "light", "intersect")["speedup"] = -0.1
		}},
		{"empty transfer path", "/configs/light/intersect/path", func(d map[string]any) {
			obj(d, "configs", "light", "intersect")["path"] = ""
		}},
		{"zero driver calls", "/configs/light/intersect/driver_calls", func(d map[string]any) {
			obj(d, "configs", "light", "intersect")["driver_calls"] = 0
		}},
		{"fractional driver calls", "/configs/compute/accum_dfr_direct/driver_calls", func(d map[string]any) {
			obj(d, "configs", "compute", "accum_dfr_direct")["driver_calls"] = 12.5
		}},
		{"bitwise agreement above 1", "/configs/compute/intersect/bitwise_agreement", func(d map[string]any) {
			obj(d, "configs", "compute", "intersect")["bitwise_agreement"] = 1.5
		}},
		{"partial measured peak memory", "/configs/light/intersect_offload/peak_memory", func(d map[string]any) {
			obj(d, "configs", "light", "intersect_offload")["peak_memory"] = map[string]any{
				"status": "measured", "streamed_bytes": 1, "concatenated_bytes": 2}
		}},
		{"not_recorded with a figure", "/configs/light/intersect_offload/peak_memory", func(d map[string]any) {
			obj(d, "configs", "light", "intersect_offload")["peak_memory"] = map[string]any{
				"status": "not_recorded", "streamed_bytes": 1}
		}},
		{"unknown row key", "/configs/light", func(d map[string]any) {
			obj(d, "configs", "light")["nearest_edge"] = map[string]any{"single_ms": 1, "batch": "1 rays"}
		}},
		{"missing accum row", "/configs/light", func(d map[string]any) {
			delete(obj(d, "configs", "light"), "accum_dfr_direct")
		}},
		{"bad batch", "/configs/light/intersect/batch", func(d map[string]any) {
			obj(d, "configs", "light", "intersect")["batch"] = "4M rays"
		}},
		{"historical without statement", "/provenance", func(d map[string]any) {
			delete(obj(d, "provenance"), "statement")
		}},
		{"compute capability of three", "/machine/devices/0/compute_capability", func(d map[string]any) {
			d["machine"].(map[string]any)["devices"].([]any)[0].(map[string]any)["compute_capability"] = []any{8, 6, 0}
		}},
		{"zero d2d", "/machine/d2d_gbps", func(d map[string]any) { obj(d, "machine")["d2d_gbps"] = 0 }},
		{"duplicate config", "/parameters/selected_configs", func(d map[string]any) {
			obj(d, "parameters")["selected_configs"] = []any{"light", "light"}
		}},
		{"schema version 2", "/schema_version", func(d map[string]any) { d["schema_version"] = 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(mutate(t, data, tc.edit))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidRecord)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			var pointers []string
			for _, p := range verr.Problems {
				pointers = append(pointers, p.Pointer)
				assert.NotEmpty(t, p.Reason)
			}
			assert.Contains(t, pointers, tc.pointer, err.Error())
		})
	}
}

func TestValidateRejectsNonJSON(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("{"), []byte(`{} {}`), []byte(`[]`)} {
		err := Validate(data)
		assert.ErrorIs(t, err, ErrInvalidRecord, "%q", data)
	}
	var r *Record
	assert.ErrorIs(t, r.Validate(), ErrInvalidRecord)
}

func TestValidationErrorNamesPointerAndReason(t *testing.T) {
	r := liveRecord()
	r.Provenance.GeneratedAt = "yesterday"
	err := r.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/provenance/generated_at: ")
	assert.Contains(t, err.Error(), "does not match pattern")
}

func TestWriteRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nested", "deeper", "run.json")
	r := liveRecord()
	require.NoError(t, WriteRecord(path, r))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want, err := json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	assert.Equal(t, string(want)+"\n", string(got))
	assert.NoError(t, Validate(got))
	assert.Equal(t, r, decodeStrict(t, got), "the written record reads back equal")

	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestWriteRecordWritesNothingOnValidationFailure(t *testing.T) {
	dir := t.TempDir()
	bad := liveRecord()
	bad.Configs["compute"].Intersect.BitwiseAgreement = ptr(2.0)

	fresh := filepath.Join(dir, "new", "run.json")
	err := WriteRecord(fresh, bad)
	require.ErrorIs(t, err, ErrInvalidRecord)
	_, statErr := os.Stat(filepath.Dir(fresh))
	assert.True(t, errors.Is(statErr, os.ErrNotExist), "not even the directory is created")

	existing := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(existing, []byte("previous\n"), 0o644))
	require.ErrorIs(t, WriteRecord(existing, bad), ErrInvalidRecord)
	got, err := os.ReadFile(existing)
	require.NoError(t, err)
	assert.Equal(t, "previous\n", string(got), "an existing file is left alone")

	require.ErrorIs(t, WriteRecord(filepath.Join(dir, "nil.json"), nil), ErrInvalidRecord)
}

func TestWriteRecordReportsWriteFailure(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	err := WriteRecord(filepath.Join(blocker, "run.json"), liveRecord())
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrInvalidRecord)
}
