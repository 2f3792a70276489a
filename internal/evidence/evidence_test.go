package evidence_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/buildinfo"
	"github.com/rayd-go/rayd/internal/evidence"
	"github.com/rayd-go/rayd/ptx"
)

// TestHeaderRecordsTheBuildAndThePTX: whatever the machine, the header
// carries the binary's stamp and every embedded module's digest.
func TestHeaderRecordsTheBuildAndThePTX(t *testing.T) {
	h, _ := evidence.New(nil) // no driver here: the error says so, the rest is filled in
	st := buildinfo.Get()
	assert.Equal(t, st, h.Build)
	assert.Equal(t, st.Commit, h.Commit)
	assert.Equal(t, st.Dirty, h.Dirty)
	assert.NotEmpty(t, h.Date)
	m, err := ptx.EmbeddedManifest()
	require.NoError(t, err)
	require.Len(t, h.PTX, len(m.Modules))
	for _, mod := range m.Modules {
		assert.Equal(t, mod.SHA256, h.PTX[mod.Name])
	}
	d, err := ptx.ManifestSHA256()
	require.NoError(t, err)
	assert.Equal(t, d, h.PTXManifest)
	assert.Contains(t, h.Describe(), st.String())
	t.Setenv("RAYD_PTX_JIT", "0")
	h, _ = evidence.New(nil)
	assert.False(t, h.PTXJIT)
	t.Setenv("RAYD_PTX_JIT", "1")
	h, _ = evidence.New(nil)
	assert.True(t, h.PTXJIT, "the header says when PTX JIT was forced")
}

// TestHeaderFieldsAreTopLevel: embedded in a report, the fields the
// evidence-status tool reads sit at the top level of the JSON.
func TestHeaderFieldsAreTopLevel(t *testing.T) {
	type report struct {
		evidence.Header
		Rows int `json:"rows"`
	}
	b, err := json.Marshal(report{Header: evidence.Header{Commit: "abc", Dirty: true, Devices: []string{"NVIDIA H200"}}, Rows: 3})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"commit", "dirty", "build", "date", "driver_version", "devices", "ptx_sha256", "ptx_manifest_sha256", "ptx_jit_forced", "rows"} {
		assert.Contains(t, m, k)
	}
	assert.Equal(t, true, m["dirty"])
}
