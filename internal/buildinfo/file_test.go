package buildinfo

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinkedReadsTheXFlags(t *testing.T) {
	bi := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-ldflags",
		Value: `-s -w -X github.com/rayd-go/rayd/internal/buildinfo.commit=0123abc -X=github.com/rayd-go/rayd/internal/buildinfo.dirty=true -X 'main.other=a b'`}}}
	c, d := linked(bi)
	assert.Equal(t, "0123abc", c)
	assert.Equal(t, "true", d)
	c, d = linked(&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-s -w"}}})
	assert.Empty(t, c)
	assert.Empty(t, d)
}

func TestSplitFlagsKeepsQuotedParts(t *testing.T) {
	assert.Equal(t, []string{"-X", "a=b c", "-s"}, splitFlags(`-X 'a=b c'  -s`))
	assert.Equal(t, []string{"x"}, splitFlags(`"x"`))
	assert.Empty(t, splitFlags("   "))
}

func TestReadFileOfThisTestBinary(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	s, err := ReadFile(exe)
	require.NoError(t, err)
	// The stamp read from the file is the one the binary reports itself.
	assert.Equal(t, Get().Commit, s.Commit)
	assert.Equal(t, Get().Dirty, s.Dirty)
}

func TestReadFileOfANonGoFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "script")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	_, err := ReadFile(p)
	assert.Error(t, err)
}
