package benchhead_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/benchhead"
)

func TestWriteJSONCreatesItsDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "r.json")
	require.NoError(t, benchhead.WriteJSON(path, map[string]int{"rows": 3}))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, byte('\n'), raw[len(raw)-1])
	var got map[string]int
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, 3, got["rows"])
}

func TestRelL2(t *testing.T) {
	assert.Equal(t, 0.0, benchhead.RelL2([]float64{1, 2}, []float64{1, 2}))
	assert.InDelta(t, 0.6, benchhead.RelL2([]float64{3, 4}, []float64{3, 1}), 1e-15)
	assert.Equal(t, 5.0, benchhead.RelL2([]float64{0, 0}, []float64{3, 4}), "a zero reference gives the absolute norm")
}
