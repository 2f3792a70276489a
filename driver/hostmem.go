package driver

import (
	"fmt"
	"unsafe"
)

// HostAllocOf allocates n page-locked elements of T (HostAlloc's memory,
// typed); free it with HostFreeOf. n == 0 gives an empty slice and no
// allocation. The context it is allocated in must be current.
func HostAllocOf[T any](n int) ([]T, error) {
	var z T
	size := int(unsafe.Sizeof(z))
	if n < 0 || size == 0 || n > int(^uint(0)>>1)/size {
		return nil, fmt.Errorf("driver: HostAllocOf: %d elements of %d bytes", n, size)
	}
	if n == 0 {
		return nil, nil
	}
	b, err := HostAlloc(n * size)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// HostFreeOf frees memory from HostAllocOf (an empty slice is a no-op).
func HostFreeOf[T any](s []T) error {
	if len(s) == 0 {
		return nil
	}
	return check("cuMemFreeHost", -1, invoke("cuMemFreeHost", cuda.cuMemFreeHost, uintptr(unsafe.Pointer(unsafe.SliceData(s)))))
}

// HostAddr is the address of s's first element (0 for an empty slice).
func HostAddr[T any](s []T) uintptr {
	p, _ := sliceBytes(s)
	return p
}
