package geom

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime/debug"
	"sync"
)

// MaxBounces is the largest max_bounces that trace_reflections and
// accumulate_reflections accept. Every reflection costs a full traversal
// per row and, for trace_reflections, ReflectionRowBytes(1, true) bytes per
// row of result on the host and on the device; a chain longer than this is
// refused with an *ArgumentError before anything is allocated.
const MaxBounces = 1024

// ErrTooLarge is matched (errors.Is) by every *AllocationError: a result or
// work buffer sized by the caller's arguments would need more memory than
// the allocation may take, or its size does not even fit in an int64.
var ErrTooLarge = errors.New("geom: result too large to allocate")

// AllocationError refuses an allocation before it is made. What names the
// buffer ("trace_reflections record"), Bytes the size asked for (only
// meaningful when Overflow is false) and Limit the bytes it may take.
type AllocationError struct {
	What     string
	Bytes    int64
	Limit    int64
	Overflow bool
}

// Error implements error.
func (e *AllocationError) Error() string {
	if e.Overflow {
		return fmt.Sprintf("geom: %s: the requested size overflows int64 bytes", e.What)
	}
	return fmt.Sprintf("geom: %s needs %d bytes, more than the %d bytes it may take", e.What, e.Bytes, e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *AllocationError) Is(target error) bool { return target == ErrTooLarge }

// Bytes returns the product of counts (typically rows, slots per row and
// bytes per slot) and whether it is a valid size: every count
// non-negative and the product representable in an int64. It never
// allocates.
func Bytes(counts ...int) (int64, bool) {
	total := uint64(1)
	for _, c := range counts {
		if c < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(total, uint64(c))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		total = lo
	}
	return int64(total), true
}

// CheckAlloc checks that a buffer of the product of counts bytes may be
// allocated within limit bytes (limit ≤ 0 means no limit beyond int64) and
// returns its size. A negative count is an *ArgumentError naming what; an
// overflowing or too large product is an *AllocationError (ErrTooLarge).
func CheckAlloc(what string, limit int64, counts ...int) (int64, error) {
	for _, c := range counts {
		if c < 0 {
			return 0, &ArgumentError{Field: what, Reason: fmt.Sprintf("negative count %d", c)}
		}
	}
	n, ok := Bytes(counts...)
	if !ok {
		return 0, &AllocationError{What: what, Limit: limit, Overflow: true}
	}
	if limit > 0 && n > limit {
		return n, &AllocationError{What: what, Bytes: n, Limit: limit}
	}
	return n, nil
}

// HostMemoryLimit is the most bytes a single host result may take: the Go
// runtime's memory limit (debug.SetMemoryLimit, GOMEMLIMIT) when one is
// set, else the machine's physical memory, else math.MaxInt64 (unknown).
// A request above it cannot succeed without the process being killed or
// the machine swapping, so the operations refuse it up front.
func HostMemoryLimit() int64 {
	limit := debug.SetMemoryLimit(-1)
	if p := physicalMemory(); p > 0 && p < limit {
		limit = p
	}
	return limit
}

// physicalMemory is the machine's RAM in bytes (0 when unknown), read once.
var physicalMemory = sync.OnceValue(readPhysicalMemory)

// CheckBounces validates the max_bounces of trace_reflections: at least 1
// and at most MaxBounces. The error is an *ArgumentError
// (ErrInvalidArgument).
func CheckBounces(maxBounces int) error {
	switch {
	case maxBounces < 1:
		return &ArgumentError{Field: "maxBounces", Reason: fmt.Sprintf("%d, must be at least 1", maxBounces)}
	case maxBounces > MaxBounces:
		return &ArgumentError{Field: "maxBounces", Reason: fmt.Sprintf("%d exceeds the limit of %d bounces (geom.MaxBounces)", maxBounces, MaxBounces)}
	}
	return nil
}

// CheckReflections validates a trace_reflections request before anything
// is allocated: maxBounces by CheckBounces, rows ≥ 0, and a record of
// rows × maxBounces slots of ReflectionRowBytes(1, images) bytes within
// limit bytes. The host record always carries the image sources (images
// true; pass HostMemoryLimit() as limit); a device record may omit them
// (pass the device's free memory). Errors: *ArgumentError
// (ErrInvalidArgument) or *AllocationError (ErrTooLarge). It allocates
// nothing unless it fails.
func CheckReflections(rows, maxBounces int, images bool, limit int64) error {
	if err := CheckBounces(maxBounces); err != nil {
		return err
	}
	if rows < 0 {
		return &ArgumentError{Field: "rows", Reason: fmt.Sprintf("%d, must not be negative", rows)}
	}
	_, err := CheckAlloc("trace_reflections record", limit, rows, maxBounces, ReflectionRowBytes(1, images))
	return err
}
