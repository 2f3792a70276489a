//go:build linux

package geom

import (
	"math"
	"syscall"
)

// readPhysicalMemory asks the kernel for the total RAM (0 on failure).
func readPhysicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	total, unit := uint64(si.Totalram), uint64(si.Unit)
	if unit == 0 {
		unit = 1
	}
	if total > math.MaxInt64/unit {
		return math.MaxInt64
	}
	return int64(total * unit)
}
