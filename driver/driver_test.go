package driver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMissingLibraryNamesEveryPath(t *testing.T) {
	var fn uintptr
	l := &library{name: "libfake", envVar: "RAYD_TEST_LIBFAKE", candidates: []string{"libdoesnotexist.so.1", "/nonexistent/libdoesnotexist.so.1"}}
	err := l.open([]symbol{{name: "x", ptr: &fn, required: true}})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNoDriver)
	assert.NotErrorIs(t, err, ErrMissingSymbol)
	var le *LoadError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, l.candidates, le.Tried)
	for _, p := range l.candidates {
		assert.Contains(t, err.Error(), p)
	}
	assert.Contains(t, err.Error(), "RAYD_TEST_LIBFAKE")
	// The result is memoised: a second open returns the same error.
	assert.Same(t, err, l.open(nil))
}

func TestEnvOverrideReplacesDefaults(t *testing.T) {
	t.Setenv("RAYD_TEST_LIBFAKE2", "/opt/custom/libcuda.so.1")
	l := &library{name: "libfake2", envVar: "RAYD_TEST_LIBFAKE2", candidates: []string{"libcuda.so.1"}}
	assert.Equal(t, []string{"/opt/custom/libcuda.so.1"}, l.paths())
}

func TestMissingSymbolError(t *testing.T) {
	le := &LoadError{Library: "libcuda", Missing: []string{"cuLaunchKernel"}}
	assert.ErrorIs(t, le, ErrMissingSymbol)
	assert.NotErrorIs(t, le, ErrNoDriver)
	assert.Contains(t, le.Error(), "cuLaunchKernel")
}

func TestResultNamesAndSentinels(t *testing.T) {
	assert.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY", ErrOutOfMemory.Name())
	assert.Contains(t, ErrIllegalAddress.Error(), "CUDA_ERROR_ILLEGAL_ADDRESS (700)")
	err := check("cuMemAlloc_v2", 1, ErrOutOfMemory)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrOutOfMemory)
	assert.NotErrorIs(t, err, ErrInvalidValue)
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "cuMemAlloc_v2", ce.Func)
	assert.Equal(t, 1, ce.Device)
	assert.Contains(t, err.Error(), "cuMemAlloc_v2 on device 1")
	assert.NoError(t, check("cuInit", -1, Success))
	// Wrapped further up, the sentinel still matches.
	assert.ErrorIs(t, fmt.Errorf("build: %w", err), ErrOutOfMemory)
	assert.Contains(t, check("cuInit", -1, ErrNotInitialized).Error(), "rayd/driver: cuInit: ")
	assert.Equal(t, "CUresult(12345)", Result(12345).Name())
}

func TestEveryResultHasAName(t *testing.T) {
	for r, n := range resultNames {
		assert.True(t, strings.HasPrefix(n, "CUDA_"), "%d", r)
	}
}

func TestFaultHookFailsTheNamedCall(t *testing.T) {
	restore := InjectFaults(func(sym string) Result {
		if sym == "cuStreamSynchronize" {
			return ErrLaunchFailed
		}
		return Success
	})
	defer restore()
	err := Stream{dev: 3}.Synchronize()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrLaunchFailed)
	var ce *CallError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, 3, ce.Device)
	// Calls the hook lets through still need the driver.
	assert.ErrorIs(t, Stream{}.Destroy(), ErrNotInitialized)
}

func TestArgsPacking(t *testing.T) {
	a := NewArgs()
	defer a.Free()
	a.PutU64(0xdeadbeefcafe)
	a.PutU32(7)
	assert.Equal(t, 2, a.Len())
	assert.Equal(t, uint64(0xdeadbeefcafe), a.slots[0])
	assert.Equal(t, uint64(7), a.slots[1])
	a.Reset()
	assert.Equal(t, 0, a.Len())
}

func TestGoString(t *testing.T) {
	b := cString("H200")
	assert.Equal(t, byte(0), b[len(b)-1])
	assert.Equal(t, "H200", goString(&b[0]))
	assert.Equal(t, "", goString(nil))
}
