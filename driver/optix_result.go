package driver

import "fmt"

// OptiXResult is an OptixResult status code (optix_types.h, OptiX 9.0). It
// implements error, so the named codes below are errors.Is-able sentinels.
type OptiXResult int32

// Named OptiX results.
const (
	OptiXSuccess                        OptiXResult = 0
	OptiXErrInvalidValue                OptiXResult = 7001
	OptiXErrHostOutOfMemory             OptiXResult = 7002
	OptiXErrInvalidOperation            OptiXResult = 7003
	OptiXErrFileIOError                 OptiXResult = 7004
	OptiXErrInvalidFileFormat           OptiXResult = 7005
	OptiXErrDiskCacheInvalidPath        OptiXResult = 7010
	OptiXErrDiskCachePermissionError    OptiXResult = 7011
	OptiXErrDiskCacheDatabaseError      OptiXResult = 7012
	OptiXErrDiskCacheInvalidData        OptiXResult = 7013
	OptiXErrLaunchFailure               OptiXResult = 7050
	OptiXErrInvalidDeviceContext        OptiXResult = 7051
	OptiXErrCUDANotInitialized          OptiXResult = 7052
	OptiXErrValidationFailure           OptiXResult = 7053
	OptiXErrInvalidInput                OptiXResult = 7200
	OptiXErrInvalidLaunchParameter      OptiXResult = 7201
	OptiXErrInvalidPayloadAccess        OptiXResult = 7202
	OptiXErrInvalidAttributeAccess      OptiXResult = 7203
	OptiXErrInvalidFunctionUse          OptiXResult = 7204
	OptiXErrInvalidFunctionArguments    OptiXResult = 7205
	OptiXErrPipelineOutOfConstantMemory OptiXResult = 7250
	OptiXErrPipelineLinkError           OptiXResult = 7251
	OptiXErrIllegalDuringTaskExecute    OptiXResult = 7270
	OptiXErrInternalCompilerError       OptiXResult = 7299
	OptiXErrDenoiserModelNotSet         OptiXResult = 7300
	OptiXErrDenoiserNotInitialized      OptiXResult = 7301
	OptiXErrNotCompatible               OptiXResult = 7400
	OptiXErrPayloadTypeMismatch         OptiXResult = 7500
	OptiXErrPayloadTypeResolutionFailed OptiXResult = 7501
	OptiXErrPayloadTypeIDInvalid        OptiXResult = 7502
	OptiXErrNotSupported                OptiXResult = 7800
	OptiXErrUnsupportedABIVersion       OptiXResult = 7801
	OptiXErrFunctionTableSizeMismatch   OptiXResult = 7802
	OptiXErrInvalidEntryFunctionOptions OptiXResult = 7803
	OptiXErrLibraryNotFound             OptiXResult = 7804
	OptiXErrEntrySymbolNotFound         OptiXResult = 7805
	OptiXErrLibraryUnloadFailure        OptiXResult = 7806
	OptiXErrDeviceOutOfMemory           OptiXResult = 7807
	OptiXErrInvalidPointer              OptiXResult = 7808
	OptiXErrCUDAError                   OptiXResult = 7900
	OptiXErrInternalError               OptiXResult = 7990
	OptiXErrUnknown                     OptiXResult = 7999
)

var optixResultNames = map[OptiXResult]string{
	OptiXSuccess:                        "OPTIX_SUCCESS",
	OptiXErrInvalidValue:                "OPTIX_ERROR_INVALID_VALUE",
	OptiXErrHostOutOfMemory:             "OPTIX_ERROR_HOST_OUT_OF_MEMORY",
	OptiXErrInvalidOperation:            "OPTIX_ERROR_INVALID_OPERATION",
	OptiXErrFileIOError:                 "OPTIX_ERROR_FILE_IO_ERROR",
	OptiXErrInvalidFileFormat:           "OPTIX_ERROR_INVALID_FILE_FORMAT",
	OptiXErrDiskCacheInvalidPath:        "OPTIX_ERROR_DISK_CACHE_INVALID_PATH",
	OptiXErrDiskCachePermissionError:    "OPTIX_ERROR_DISK_CACHE_PERMISSION_ERROR",
	OptiXErrDiskCacheDatabaseError:      "OPTIX_ERROR_DISK_CACHE_DATABASE_ERROR",
	OptiXErrDiskCacheInvalidData:        "OPTIX_ERROR_DISK_CACHE_INVALID_DATA",
	OptiXErrLaunchFailure:               "OPTIX_ERROR_LAUNCH_FAILURE",
	OptiXErrInvalidDeviceContext:        "OPTIX_ERROR_INVALID_DEVICE_CONTEXT",
	OptiXErrCUDANotInitialized:          "OPTIX_ERROR_CUDA_NOT_INITIALIZED",
	OptiXErrValidationFailure:           "OPTIX_ERROR_VALIDATION_FAILURE",
	OptiXErrInvalidInput:                "OPTIX_ERROR_INVALID_INPUT",
	OptiXErrInvalidLaunchParameter:      "OPTIX_ERROR_INVALID_LAUNCH_PARAMETER",
	OptiXErrInvalidPayloadAccess:        "OPTIX_ERROR_INVALID_PAYLOAD_ACCESS",
	OptiXErrInvalidAttributeAccess:      "OPTIX_ERROR_INVALID_ATTRIBUTE_ACCESS",
	OptiXErrInvalidFunctionUse:          "OPTIX_ERROR_INVALID_FUNCTION_USE",
	OptiXErrInvalidFunctionArguments:    "OPTIX_ERROR_INVALID_FUNCTION_ARGUMENTS",
	OptiXErrPipelineOutOfConstantMemory: "OPTIX_ERROR_PIPELINE_OUT_OF_CONSTANT_MEMORY",
	OptiXErrPipelineLinkError:           "OPTIX_ERROR_PIPELINE_LINK_ERROR",
	OptiXErrIllegalDuringTaskExecute:    "OPTIX_ERROR_ILLEGAL_DURING_TASK_EXECUTE",
	OptiXErrInternalCompilerError:       "OPTIX_ERROR_INTERNAL_COMPILER_ERROR",
	OptiXErrDenoiserModelNotSet:         "OPTIX_ERROR_DENOISER_MODEL_NOT_SET",
	OptiXErrDenoiserNotInitialized:      "OPTIX_ERROR_DENOISER_NOT_INITIALIZED",
	OptiXErrNotCompatible:               "OPTIX_ERROR_NOT_COMPATIBLE",
	OptiXErrPayloadTypeMismatch:         "OPTIX_ERROR_PAYLOAD_TYPE_MISMATCH",
	OptiXErrPayloadTypeResolutionFailed: "OPTIX_ERROR_PAYLOAD_TYPE_RESOLUTION_FAILED",
	OptiXErrPayloadTypeIDInvalid:        "OPTIX_ERROR_PAYLOAD_TYPE_ID_INVALID",
	OptiXErrNotSupported:                "OPTIX_ERROR_NOT_SUPPORTED",
	OptiXErrUnsupportedABIVersion:       "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION",
	OptiXErrFunctionTableSizeMismatch:   "OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH",
	OptiXErrInvalidEntryFunctionOptions: "OPTIX_ERROR_INVALID_ENTRY_FUNCTION_OPTIONS",
	OptiXErrLibraryNotFound:             "OPTIX_ERROR_LIBRARY_NOT_FOUND",
	OptiXErrEntrySymbolNotFound:         "OPTIX_ERROR_ENTRY_SYMBOL_NOT_FOUND",
	OptiXErrLibraryUnloadFailure:        "OPTIX_ERROR_LIBRARY_UNLOAD_FAILURE",
	OptiXErrDeviceOutOfMemory:           "OPTIX_ERROR_DEVICE_OUT_OF_MEMORY",
	OptiXErrInvalidPointer:              "OPTIX_ERROR_INVALID_POINTER",
	OptiXErrCUDAError:                   "OPTIX_ERROR_CUDA_ERROR",
	OptiXErrInternalError:               "OPTIX_ERROR_INTERNAL_ERROR",
	OptiXErrUnknown:                     "OPTIX_ERROR_UNKNOWN",
}

// Name returns the OptixResult's symbolic name ("OptixResult(n)" for codes
// OptiX 9.0 does not define).
func (r OptiXResult) Name() string {
	if n, ok := optixResultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("OptixResult(%d)", int32(r))
}

// Error returns "NAME (code)".
func (r OptiXResult) Error() string { return fmt.Sprintf("%s (%d)", r.Name(), int32(r)) }

// OptiXError is a failed OptiX call: the table entry, the device ordinal it
// was issued for (-1 when not tied to a device), the status and, for the
// compiling calls (module, program group and pipeline creation), the log
// OptiX wrote for this call.
type OptiXError struct {
	Func   string // table entry, e.g. "optixAccelBuild"
	Device int    // device ordinal, or -1
	Result OptiXResult
	Log    string // compiler/linker feedback, may be empty
}

func (e *OptiXError) Error() string {
	var s string
	if e.Device >= 0 {
		s = fmt.Sprintf("rayd/driver: %s on device %d: %v", e.Func, e.Device, e.Result)
	} else {
		s = fmt.Sprintf("rayd/driver: %s: %v", e.Func, e.Result)
	}
	if e.Log != "" {
		s += "\nOptiX log:\n" + e.Log
	}
	return s
}

// Unwrap exposes the OptiXResult, so errors.Is(err, driver.OptiXErrInvalidValue) holds.
func (e *OptiXError) Unwrap() error { return e.Result }

// optixCheck turns the 32-bit status returned by invoke into nil or an
// *OptiXError.
func optixCheck(fn string, dev int, r Result) error {
	return optixCheckLog(fn, dev, r, "")
}

func optixCheckLog(fn string, dev int, r Result, log string) error {
	if res := OptiXResult(int32(uint32(r))); res != OptiXSuccess {
		return &OptiXError{Func: fn, Device: dev, Result: res, Log: log}
	}
	return nil
}
