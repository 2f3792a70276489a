//go:build !linux

package geom

// readPhysicalMemory is unknown (0) off Linux: HostMemoryLimit then falls
// back to the Go memory limit.
func readPhysicalMemory() int64 { return 0 }
