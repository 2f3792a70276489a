package benchmarks

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzValidateRecord feeds arbitrary bytes to the record's parser: Validate
// answers nil or an ErrInvalidRecord error, never panics, and a record it
// accepts decodes, prints, summarizes and re-validates.
func FuzzValidateRecord(f *testing.F) {
	hist, err := os.ReadFile(filepath.Join("results", "multi_device_2xa6000_20260727.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(hist)
	live, err := json.Marshal(liveRecord())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(live)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"schema_version": 1, "benchmark": "rayd_multi_device"}`))
	f.Add([]byte(`[1, 2, 3]`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Validate(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("Validate: untyped error %v", err)
			}
			return
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("a record the schema accepts does not decode: %v", err)
		}
		if err := WriteTable(io.Discard, &r); err != nil {
			t.Fatalf("WriteTable: %v", err)
		}
		_ = Summarize([]*Record{&r})
		if err := r.Validate(); err != nil {
			t.Fatalf("re-encoded record does not validate: %v", err)
		}
	})
}
