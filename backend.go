package rayd

import (
	"github.com/rayd-go/rayd/launch"
)

// AutoBackend is the GPU backend BackendAuto picks for device ordinal.
//
// On GPUs without RT cores (H100/H200, A100: compute capability 8.0 and
// 9.0) OptiX traverses in software, and rayd-go's own BVH is faster: on an
// H200, intersect of 4,194,304 rays took 0.49 ms vs 0.75 ms (light) and
// 12.3 ms vs 35.8 ms (compute), BVH builds 0.25 ms vs 0.76 ms and 1.2 ms vs
// 5.9 ms (benchmarks/results/). On GPUs with RT cores (Turing, Ampere and
// Ada workstation parts, Blackwell consumer parts: 7.5, 8.6, 8.9, 12.x)
// OptiX's hardware traversal is used; that choice follows the hardware, not
// a measurement of ours. The check reads the compute capability only (no
// OptiX context is created).
func AutoBackend(ordinal int) Backend {
	major, minor, err := launch.ComputeCapability(ordinal)
	if err != nil {
		return BackendCUDA
	}
	if hasRTCores(major, minor) {
		return BackendOptiX
	}
	return BackendCUDA
}

func hasRTCores(major, minor int) bool {
	switch {
	case major == 7 && minor == 5, major == 8 && (minor == 6 || minor == 9), major == 12:
		return true
	}
	return false
}
