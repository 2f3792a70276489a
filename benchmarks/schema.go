package benchmarks

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaID is the $id of the record schema (version 1).
const SchemaID = "https://github.com/rayd-go/rayd/benchmarks/multi-device-benchmark-v1.json"

// SchemaPath is the schema file's path relative to the repository root.
const SchemaPath = "benchmarks/multi_device_result.schema.json"

//go:embed multi_device_result.schema.json
var schemaBytes []byte

// ErrInvalidRecord is wrapped by every error that reports a record the
// schema rejects (or that is not JSON at all).
var ErrInvalidRecord = errors.New("invalid multi-device benchmark record")

// SchemaBytes returns a copy of the embedded JSON Schema, byte for byte the
// committed multi_device_result.schema.json.
func SchemaBytes() []byte { return bytes.Clone(schemaBytes) }

// Problem is one reason a record failed validation.
type Problem struct {
	// Pointer is the JSON pointer of the failing value ("" is the root).
	Pointer string `json:"pointer"`
	// Reason is the schema's complaint about it.
	Reason string `json:"reason"`
}

// String renders the problem as "pointer: reason".
func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return ptr + ": " + p.Reason
}

// ValidationError is a record the schema rejected, with every failing
// location. It wraps ErrInvalidRecord.
type ValidationError struct {
	Problems []Problem
}

// Error lists the problems, one per "; "-separated clause.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return ErrInvalidRecord.Error() + ": " + strings.Join(parts, "; ")
}

// Unwrap returns ErrInvalidRecord.
func (e *ValidationError) Unwrap() error { return ErrInvalidRecord }

// compiledSchema compiles the embedded schema once.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaBytes))
	if err != nil {
		return nil, fmt.Errorf("benchmarks: embedded schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, fmt.Errorf("benchmarks: embedded schema: %w", err)
	}
	sch, err := c.Compile(SchemaID)
	if err != nil {
		return nil, fmt.Errorf("benchmarks: embedded schema: %w", err)
	}
	return sch, nil
})

var printer = message.NewPrinter(language.English)

// Validate checks one JSON document against the record schema. A rejected
// document gives a *ValidationError (errors.Is ErrInvalidRecord) naming
// each failing JSON pointer and the reason.
func Validate(data []byte) error {
	sch, err := compiledSchema()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &ValidationError{Problems: []Problem{{Reason: "not a JSON document: " + err.Error()}}}
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Errorf("%w: %w", ErrInvalidRecord, err)
	}
	var problems []Problem
	collectProblems(verr, &problems)
	if len(problems) == 0 {
		problems = []Problem{{Reason: verr.Error()}}
	}
	return &ValidationError{Problems: problems}
}

// collectProblems appends the leaves of a validation error tree.
func collectProblems(e *jsonschema.ValidationError, out *[]Problem) {
	if len(e.Causes) == 0 {
		*out = append(*out, Problem{
			Pointer: jsonPointer(e.InstanceLocation),
			Reason:  e.ErrorKind.LocalizedString(printer),
		})
		return
	}
	for _, c := range e.Causes {
		collectProblems(c, out)
	}
}

// jsonPointer joins reference tokens into an RFC 6901 pointer.
func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}

// marshalRecord renders r as WriteRecord writes it: indent 2, no trailing
// newline. A nil peer-access pair list is written as an empty array.
func marshalRecord(r *Record) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil record", ErrInvalidRecord)
	}
	c := *r
	if c.Machine.PeerAccess.Pairs == nil {
		c.Machine.PeerAccess.Pairs = []PeerPair{}
	}
	data, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRecord, err)
	}
	return data, nil
}

// Validate marshals the record the way WriteRecord does and validates it.
func (r *Record) Validate() error {
	data, err := marshalRecord(r)
	if err != nil {
		return err
	}
	return Validate(data)
}

// WriteRecord validates r and writes it to path as JSON (indent 2, map keys
// sorted, struct fields in declaration order) followed by a newline,
// creating the parent directory. A record the schema rejects is not written,
// and a failed write leaves no partial file at path.
func WriteRecord(path string, r *Record) error {
	data, err := marshalRecord(r)
	if err != nil {
		return err
	}
	if err := Validate(data); err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place, creating the parent directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := f.Chmod(0o644); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("benchmarks: write %s: %w", path, werr)
	}
	return nil
}
