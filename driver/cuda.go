package driver

import (
	"sync"
	"unsafe"
)

var (
	initOnce sync.Once
	initErr  error
)

// Load opens libcuda and calls cuInit(0) once per process. Every other
// function of this package calls it first; it is safe to call repeatedly and
// concurrently. Without a driver it returns an error matching ErrNoDriver.
func Load() error {
	initOnce.Do(func() {
		if err := cudaLib.open(cuda.symbolList()); err != nil {
			initErr = err
			return
		}
		initErr = check("cuInit", -1, invoke("cuInit", cuda.cuInit, 0))
	})
	return initErr
}

// CUDAInfo reports how libcuda was loaded (path, absent optional symbols).
func CUDAInfo() LibraryInfo { return cudaLib.info() }

// HasAsyncAlloc reports whether the driver exports stream-ordered allocation
// (cuMemAllocAsync / cuMemFreeAsync).
func HasAsyncAlloc() bool {
	return cuda.cuMemAllocAsync != 0 && cuda.cuMemFreeAsync != 0 && cuda.cuDeviceGetDefaultMemPool != 0 &&
		cuda.cuMemPoolSetAttribute != 0 && cuda.cuMemPoolTrimTo != 0
}

// DriverVersion returns the CUDA version the driver supports (13000 = 13.0).
func DriverVersion() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var v int32
	r := invoke("cuDriverGetVersion", cuda.cuDriverGetVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), check("cuDriverGetVersion", -1, r)
}

// DeviceCount returns the number of visible CUDA devices.
func DeviceCount() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var n int32
	r := invoke("cuDeviceGetCount", cuda.cuDeviceGetCount, uintptr(unsafe.Pointer(&n)))
	return int(n), check("cuDeviceGetCount", -1, r)
}

// driverErrorText asks cuGetErrorName/cuGetErrorString (fn) for r's text.
func driverErrorText(fn uintptr, r Result) (string, bool) {
	if fn == 0 {
		return "", false
	}
	var p *byte
	if invoke("cuGetErrorText", fn, uintptr(r), uintptr(unsafe.Pointer(&p))) != Success || p == nil {
		return "", false
	}
	return goString(p), true
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cString returns a NUL-terminated copy of s.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
