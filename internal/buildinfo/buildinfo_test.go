package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func info(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
	return func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}, Settings: settings}, true
	}
}

func TestLinkTimeValuesWin(t *testing.T) {
	s := get("abc123", "true", info(debug.BuildSetting{Key: "vcs.revision", Value: "other"}))
	assert.Equal(t, Stamp{Commit: "abc123", Dirty: true, Source: "ldflags", GoVersion: "go1.26", Module: "(devel)"}, s)
	assert.Equal(t, "abc123+dirty", s.String())
}

func TestVCSStampIsTheFallback(t *testing.T) {
	s := get("", "", info(debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		debug.BuildSetting{Key: "vcs.modified", Value: "false"}))
	assert.Equal(t, "vcs", s.Source)
	assert.False(t, s.Dirty)
	assert.Equal(t, "0123456789ab", s.Short())
}

func TestNoStampSaysUnknown(t *testing.T) {
	s := get("", "", func() (*debug.BuildInfo, bool) { return nil, false })
	assert.Equal(t, Stamp{Commit: "unknown", Source: "none"}, s)
	s = get("", "", info())
	assert.Equal(t, "unknown", s.Commit)
	assert.Equal(t, "none", s.Source)
}

func TestGetReadsThisBinary(t *testing.T) {
	// A test binary has no VCS stamp; without -X the commit is unknown or
	// the value the Makefile linked in. Either way Get never panics and
	// reports the toolchain.
	s := Get()
	assert.NotEmpty(t, s.Commit)
	assert.NotEmpty(t, s.GoVersion)
}
