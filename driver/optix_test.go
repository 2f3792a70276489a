package driver

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptiXResultNames(t *testing.T) {
	assert.Equal(t, "OPTIX_SUCCESS", OptiXSuccess.Name())
	assert.Equal(t, "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION", OptiXErrUnsupportedABIVersion.Name())
	assert.Equal(t, "OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH", OptiXErrFunctionTableSizeMismatch.Name())
	assert.Equal(t, "OPTIX_ERROR_INVALID_POINTER", OptiXResult(7808).Name())
	assert.Equal(t, "OPTIX_ERROR_DISK_CACHE_INVALID_DATA (7013)", OptiXErrDiskCacheInvalidData.Error())
	assert.Equal(t, "OptixResult(1234)", OptiXResult(1234).Name())
	for r, n := range optixResultNames {
		if r == OptiXSuccess {
			continue
		}
		assert.True(t, strings.HasPrefix(n, "OPTIX_ERROR_"), "%d: %s", r, n)
		assert.True(t, r >= 7000 && r < 8000, "%s = %d", n, r)
	}
	assert.Len(t, optixResultNames, 42, "every OptixResult of OptiX 9.0")
}

func TestOptiXErrorMapping(t *testing.T) {
	assert.NoError(t, optixCheck("optixLaunch", 0, Success))
	err := optixCheck("optixAccelBuild", 1, Result(7807))
	require.Error(t, err)
	assert.ErrorIs(t, err, OptiXErrDeviceOutOfMemory)
	assert.NotErrorIs(t, err, OptiXErrInvalidValue)
	var oe *OptiXError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "optixAccelBuild", oe.Func)
	assert.Equal(t, 1, oe.Device)
	assert.Equal(t, "rayd/driver: optixAccelBuild on device 1: OPTIX_ERROR_DEVICE_OUT_OF_MEMORY (7807)", err.Error())
	assert.ErrorIs(t, fmt.Errorf("scene: %w", err), OptiXErrDeviceOutOfMemory)
	// A compile failure carries the log of that call.
	err = optixCheckLog("optixModuleCreate", -1, Result(7200), "COMPILE ERROR: bad PTX")
	assert.ErrorIs(t, err, OptiXErrInvalidInput)
	assert.Contains(t, err.Error(), "optixModuleCreate: OPTIX_ERROR_INVALID_INPUT (7200)\nOptiX log:\nCOMPILE ERROR: bad PTX")
	// The result word is a 32-bit int: a negative code survives the conversion.
	err = optixCheck("x", -1, Result(0xFFFFFFFF))
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, OptiXResult(-1), oe.Result)
}

func TestOptiXFaultHookSeesTableCalls(t *testing.T) {
	restore := InjectFaults(func(sym string) Result {
		if sym == "optixLaunch" || sym == "optixDeviceContextGetProperty" {
			return Result(OptiXErrLaunchFailure)
		}
		return Success
	})
	defer restore()
	err := OptiXPipeline{dev: 2}.Launch(Stream{}, 0, 0, &OptiXShaderBindingTable{}, 1, 1, 1)
	assert.ErrorIs(t, err, OptiXErrLaunchFailure)
	_, err = OptiXContext{dev: 0}.Property(OptiXPropRTCoreVersion)
	assert.ErrorIs(t, err, OptiXErrLaunchFailure)
	var oe *OptiXError
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, "optixDeviceContextGetProperty", oe.Func)
}

func TestOptiXWithoutDriver(t *testing.T) {
	if os.Getenv("RAYD_TEST_NO_CUDA") != "1" {
		// Re-run with a libcuda path that cannot exist, so the no-driver
		// behaviour is checked on every machine, GPU machines included.
		cmd := exec.Command(os.Args[0], "-test.run=^TestOptiXWithoutDriver$", "-test.v")
		cmd.Env = append(os.Environ(), "RAYD_TEST_NO_CUDA=1", "RAYD_LIBCUDA=/nonexistent/libcuda.so.1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestOptiXWithoutDriver")
		return
	}
	_, cudaErr := DeviceCount()
	require.Error(t, cudaErr)
	// Without a usable CUDA driver (no library, or no device) OptiX reports
	// the CUDA load error itself.
	err := LoadOptiXTable()
	require.Error(t, err)
	assert.ErrorIs(t, err, cudaErr)
	_, err = CreateOptiXContext(Context{}, OptiXContextOptions{})
	assert.ErrorIs(t, err, cudaErr)
}

func TestOptiXLogRouting(t *testing.T) {
	var buf bytes.Buffer
	SetOptiXLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer SetOptiXLogger(nil)
	before, _ := OptiXLogMessages()
	tag, msg := cString("DISKCACHE"), cString("Cache miss for key")
	optixLog(4, &tag[0], &msg[0], 3) // data = ordinal + 1
	warn := cString("slow path")
	optixLog(3, &tag[0], &warn[0], 1)
	n, last := OptiXLogMessages()
	assert.Equal(t, before+2, n)
	assert.Equal(t, "slow path", last)
	out := buf.String()
	assert.Contains(t, out, `level=DEBUG msg="Cache miss for key" tag=DISKCACHE optix_level=4 device=2`)
	assert.Contains(t, out, `level=WARN msg="slow path" tag=DISKCACHE optix_level=3 device=0`)
	assert.Equal(t, slog.LevelError, OptiXSlogLevel(1))
	assert.Equal(t, slog.LevelError, OptiXSlogLevel(2))
	assert.Equal(t, slog.LevelDebug, OptiXSlogLevel(9))
}
