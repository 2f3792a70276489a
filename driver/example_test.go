package driver_test

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/driver"
)

// Driver failures are values: match the status with errors.Is and read the
// failing function and device with errors.As.
func ExampleCallError() {
	var err error = &driver.CallError{Func: "cuMemAlloc_v2", Device: 1, Result: driver.ErrOutOfMemory}
	err = fmt.Errorf("building the BVH: %w", err)
	var ce *driver.CallError
	if errors.Is(err, driver.ErrOutOfMemory) && errors.As(err, &ce) {
		fmt.Println(ce.Func, "failed on device", ce.Device, "with", ce.Result.Name())
	}
	// Output: cuMemAlloc_v2 failed on device 1 with CUDA_ERROR_OUT_OF_MEMORY
}

// Without an NVIDIA driver every entry point reports ErrNoDriver; the error
// text names every path the loader tried.
func ExampleDeviceCount() {
	n, err := driver.DeviceCount()
	switch {
	case errors.Is(err, driver.ErrNoDriver):
		fmt.Println("no NVIDIA driver:", err)
	case err != nil:
		fmt.Println("driver present but unusable:", err)
	default:
		fmt.Println(n, "CUDA device(s)")
	}
}
