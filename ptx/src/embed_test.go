package src_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cudasrc "github.com/rayd-go/rayd/ptx/src"
)

// TestEmbeddedSourcesAreTheDirectory: every .cu/.cuh file of the directory
// is embedded, byte for byte.
func TestEmbeddedSourcesAreTheDirectory(t *testing.T) {
	var want []string
	for _, pat := range []string{"*.cu", "*.cuh"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		want = append(want, m...)
	}
	require.NotEmpty(t, want)
	assert.ElementsMatch(t, want, cudasrc.Names())
	for _, name := range want {
		disk, err := os.ReadFile(name)
		require.NoError(t, err)
		got, err := cudasrc.Read(name)
		require.NoError(t, err)
		assert.Equal(t, disk, got, name)
	}
	_, err := cudasrc.Read("missing.cu")
	assert.Error(t, err)
}
