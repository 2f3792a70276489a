package driver

import (
	"fmt"
)

// Result is a CUresult status code. It implements error, so a Result can be
// compared with errors.Is against the sentinels below.
type Result uint32

// Named CUDA driver results (cuda.h, CUDA 13.0).
const (
	Success                  Result = 0
	ErrInvalidValue          Result = 1
	ErrOutOfMemory           Result = 2
	ErrNotInitialized        Result = 3
	ErrDeinitialized         Result = 4
	ErrNoDevice              Result = 100
	ErrInvalidDevice         Result = 101
	ErrInvalidImage          Result = 200
	ErrInvalidContext        Result = 201
	ErrNoBinaryForGPU        Result = 209
	ErrPeerAccessUnsupported Result = 217
	ErrInvalidPTX            Result = 218
	ErrUnsupportedPTXVersion Result = 222
	ErrInvalidHandle         Result = 400
	ErrNotFound              Result = 500
	ErrNotReady              Result = 600
	ErrIllegalAddress        Result = 700
	ErrLaunchOutOfResources  Result = 701
	ErrLaunchTimeout         Result = 702
	ErrPeerAccessEnabled     Result = 704
	ErrPeerAccessNotEnabled  Result = 705
	ErrContextIsDestroyed    Result = 709
	ErrAssert                Result = 710
	ErrIllegalInstruction    Result = 715
	ErrMisalignedAddress     Result = 716
	ErrLaunchFailed          Result = 719
	ErrNotSupported          Result = 801
	ErrUnknown               Result = 999
)

var resultNames = map[Result]string{
	Success:                  "CUDA_SUCCESS",
	ErrInvalidValue:          "CUDA_ERROR_INVALID_VALUE",
	ErrOutOfMemory:           "CUDA_ERROR_OUT_OF_MEMORY",
	ErrNotInitialized:        "CUDA_ERROR_NOT_INITIALIZED",
	ErrDeinitialized:         "CUDA_ERROR_DEINITIALIZED",
	ErrNoDevice:              "CUDA_ERROR_NO_DEVICE",
	ErrInvalidDevice:         "CUDA_ERROR_INVALID_DEVICE",
	ErrInvalidImage:          "CUDA_ERROR_INVALID_IMAGE",
	ErrInvalidContext:        "CUDA_ERROR_INVALID_CONTEXT",
	ErrNoBinaryForGPU:        "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ErrPeerAccessUnsupported: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	ErrInvalidPTX:            "CUDA_ERROR_INVALID_PTX",
	ErrUnsupportedPTXVersion: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	ErrInvalidHandle:         "CUDA_ERROR_INVALID_HANDLE",
	ErrNotFound:              "CUDA_ERROR_NOT_FOUND",
	ErrNotReady:              "CUDA_ERROR_NOT_READY",
	ErrIllegalAddress:        "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrLaunchOutOfResources:  "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	ErrLaunchTimeout:         "CUDA_ERROR_LAUNCH_TIMEOUT",
	ErrPeerAccessEnabled:     "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	ErrPeerAccessNotEnabled:  "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	ErrContextIsDestroyed:    "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	ErrAssert:                "CUDA_ERROR_ASSERT",
	ErrIllegalInstruction:    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	ErrMisalignedAddress:     "CUDA_ERROR_MISALIGNED_ADDRESS",
	ErrLaunchFailed:          "CUDA_ERROR_LAUNCH_FAILED",
	ErrNotSupported:          "CUDA_ERROR_NOT_SUPPORTED",
	ErrUnknown:               "CUDA_ERROR_UNKNOWN",
}

// Name returns the CUresult's symbolic name, asking the driver (cuGetErrorName)
// for codes this package does not list.
func (r Result) Name() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	if s, ok := driverErrorText(cuda.cuGetErrorName, r); ok {
		return s
	}
	return fmt.Sprintf("CUresult(%d)", uint32(r))
}

// Error returns "NAME (code): description", the description coming from
// cuGetErrorString when the driver is loaded.
func (r Result) Error() string {
	if s, ok := driverErrorText(cuda.cuGetErrorString, r); ok {
		return fmt.Sprintf("%s (%d): %s", r.Name(), uint32(r), s)
	}
	return fmt.Sprintf("%s (%d)", r.Name(), uint32(r))
}

// CallError is a failed driver call: the C function, the device ordinal it was
// issued for (-1 when not tied to a device) and the driver's status.
type CallError struct {
	Func   string // C symbol, e.g. "cuMemAlloc_v2"
	Device int    // device ordinal, or -1
	Result Result
}

func (e *CallError) Error() string {
	if e.Device >= 0 {
		return fmt.Sprintf("rayd/driver: %s on device %d: %v", e.Func, e.Device, e.Result)
	}
	return fmt.Sprintf("rayd/driver: %s: %v", e.Func, e.Result)
}

// Unwrap exposes the Result so errors.Is(err, driver.ErrOutOfMemory) holds.
func (e *CallError) Unwrap() error { return e.Result }

// check turns a status into nil or a *CallError.
func check(fn string, dev int, r Result) error {
	if r == Success {
		return nil
	}
	return &CallError{Func: fn, Device: dev, Result: r}
}
