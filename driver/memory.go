package driver

import (
	"unsafe"
)

// DevicePtr is a CUdeviceptr: an address in the unified device address space.
type DevicePtr uint64

// MemAlloc allocates bytes of device memory in the current context.
func MemAlloc(dev int, bytes uint64) (DevicePtr, error) {
	var p DevicePtr
	r := invoke("cuMemAlloc_v2", cuda.cuMemAlloc_v2, uintptr(unsafe.Pointer(&p)), uintptr(bytes))
	return p, check("cuMemAlloc_v2", dev, r)
}

// MemFree frees memory from MemAlloc.
func MemFree(dev int, p DevicePtr) error {
	return check("cuMemFree_v2", dev, invoke("cuMemFree_v2", cuda.cuMemFree_v2, uintptr(p)))
}

// MemAllocAsync allocates stream-ordered device memory (HasAsyncAlloc).
func MemAllocAsync(dev int, bytes uint64, s Stream) (DevicePtr, error) {
	var p DevicePtr
	r := invoke("cuMemAllocAsync", cuda.cuMemAllocAsync, uintptr(unsafe.Pointer(&p)), uintptr(bytes), s.h)
	return p, check("cuMemAllocAsync", dev, r)
}

// MemFreeAsync frees stream-ordered memory once s reaches this point.
func MemFreeAsync(dev int, p DevicePtr, s Stream) error {
	return check("cuMemFreeAsync", dev, invoke("cuMemFreeAsync", cuda.cuMemFreeAsync, uintptr(p), s.h))
}

// HostAlloc allocates page-locked host memory usable for truly asynchronous
// copies; free it with HostFree.
func HostAlloc(bytes int) ([]byte, error) {
	var p unsafe.Pointer
	r := invoke("cuMemAllocHost_v2", cuda.cuMemAllocHost_v2, uintptr(unsafe.Pointer(&p)), uintptr(bytes))
	if err := check("cuMemAllocHost_v2", -1, r); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), bytes), nil
}

// HostFree frees memory from HostAlloc.
func HostFree(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return check("cuMemFreeHost", -1, invoke("cuMemFreeHost", cuda.cuMemFreeHost, uintptr(unsafe.Pointer(&b[0]))))
}

func sliceBytes[T any](s []T) (uintptr, uint64) {
	if len(s) == 0 {
		return 0, 0
	}
	var z T
	return uintptr(unsafe.Pointer(unsafe.SliceData(s))), uint64(len(s)) * uint64(unsafe.Sizeof(z))
}

// CopyHtoD copies src to dst synchronously.
func CopyHtoD[T any](dev int, dst DevicePtr, src []T) error {
	p, n := sliceBytes(src)
	if n == 0 {
		return nil
	}
	r := invoke("cuMemcpyHtoD_v2", cuda.cuMemcpyHtoD_v2, uintptr(dst), p, uintptr(n))
	return check("cuMemcpyHtoD_v2", dev, r)
}

// CopyHtoDAsync queues a copy of src to dst on s. For pageable Go memory the
// driver stages src before returning, so src may be reused on return.
func CopyHtoDAsync[T any](dev int, dst DevicePtr, src []T, s Stream) error {
	p, n := sliceBytes(src)
	if n == 0 {
		return nil
	}
	r := invoke("cuMemcpyHtoDAsync_v2", cuda.cuMemcpyHtoDAsync_v2, uintptr(dst), p, uintptr(n), s.h)
	return check("cuMemcpyHtoDAsync_v2", dev, r)
}

// CopyDtoH copies src to dst synchronously.
func CopyDtoH[T any](dev int, dst []T, src DevicePtr) error {
	p, n := sliceBytes(dst)
	if n == 0 {
		return nil
	}
	r := invoke("cuMemcpyDtoH_v2", cuda.cuMemcpyDtoH_v2, p, uintptr(src), uintptr(n))
	return check("cuMemcpyDtoH_v2", dev, r)
}

// CopyDtoHAsync queues a device-to-host copy on s. dst must stay alive and
// untouched until s has passed this point (synchronize s or an event after it).
func CopyDtoHAsync[T any](dev int, dst []T, src DevicePtr, s Stream) error {
	p, n := sliceBytes(dst)
	if n == 0 {
		return nil
	}
	r := invoke("cuMemcpyDtoHAsync_v2", cuda.cuMemcpyDtoHAsync_v2, p, uintptr(src), uintptr(n), s.h)
	return check("cuMemcpyDtoHAsync_v2", dev, r)
}

// CopyDtoD copies bytes between two allocations of the same context.
func CopyDtoD(dev int, dst, src DevicePtr, bytes uint64) error {
	return check("cuMemcpyDtoD_v2", dev, invoke("cuMemcpyDtoD_v2", cuda.cuMemcpyDtoD_v2, uintptr(dst), uintptr(src), uintptr(bytes)))
}

// CopyDtoDAsync queues a device-to-device copy on s (UVA: also across peers
// with peer access enabled).
func CopyDtoDAsync(dev int, dst, src DevicePtr, bytes uint64, s Stream) error {
	r := invoke("cuMemcpyDtoDAsync_v2", cuda.cuMemcpyDtoDAsync_v2, uintptr(dst), uintptr(src), uintptr(bytes), s.h)
	return check("cuMemcpyDtoDAsync_v2", dev, r)
}

// CopyPeer copies bytes from src in srcCtx to dst in dstCtx synchronously.
func CopyPeer(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, bytes uint64) error {
	r := invoke("cuMemcpyPeer", cuda.cuMemcpyPeer, uintptr(dst), dstCtx.h, uintptr(src), srcCtx.h, uintptr(bytes))
	return check("cuMemcpyPeer", dstCtx.dev.Ordinal, r)
}

// CopyPeerAsync queues a peer copy on s (a stream of either context).
func CopyPeerAsync(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, bytes uint64, s Stream) error {
	r := invoke("cuMemcpyPeerAsync", cuda.cuMemcpyPeerAsync, uintptr(dst), dstCtx.h, uintptr(src), srcCtx.h, uintptr(bytes), s.h)
	return check("cuMemcpyPeerAsync", s.dev, r)
}

// MemsetD8Async sets n bytes at p to v on s.
func MemsetD8Async(dev int, p DevicePtr, v uint8, n uint64, s Stream) error {
	return check("cuMemsetD8Async", dev, invoke("cuMemsetD8Async", cuda.cuMemsetD8Async, uintptr(p), uintptr(v), uintptr(n), s.h))
}

// MemsetD32Async sets n 32-bit words at p to v on s.
func MemsetD32Async(dev int, p DevicePtr, v uint32, n uint64, s Stream) error {
	return check("cuMemsetD32Async", dev, invoke("cuMemsetD32Async", cuda.cuMemsetD32Async, uintptr(p), uintptr(v), uintptr(n), s.h))
}

// PointerDeviceOrdinal returns the ordinal of the device that owns p
// (cuPointerGetAttribute DEVICE_ORDINAL); used to reject wrong-device buffers.
func PointerDeviceOrdinal(p DevicePtr) (int, error) {
	var v int32
	const attrDeviceOrdinal = 9
	r := invoke("cuPointerGetAttribute", cuda.cuPointerGetAttribute, uintptr(unsafe.Pointer(&v)), attrDeviceOrdinal, uintptr(p))
	return int(v), check("cuPointerGetAttribute", -1, r)
}

// SizeOf returns the size in bytes of one T (so packages above driver need
// not import unsafe).
func SizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// MemPool is a CUDA memory pool (CUmemoryPool), the backing store of
// stream-ordered allocations.
type MemPool struct {
	h   uintptr
	dev int
}

// DefaultMemPool returns d's default memory pool (HasAsyncAlloc must hold).
func DefaultMemPool(d Device) (MemPool, error) {
	var h uintptr
	r := invoke("cuDeviceGetDefaultMemPool", cuda.cuDeviceGetDefaultMemPool, uintptr(unsafe.Pointer(&h)), uintptr(d.handle))
	return MemPool{h: h, dev: d.Ordinal}, check("cuDeviceGetDefaultMemPool", d.Ordinal, r)
}

// SetReleaseThreshold sets how many bytes the pool keeps reserved across
// synchronisations (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD); ^uint64(0) keeps all.
func (p MemPool) SetReleaseThreshold(bytes uint64) error {
	const attrReleaseThreshold = 4
	v := bytes
	r := invoke("cuMemPoolSetAttribute", cuda.cuMemPoolSetAttribute, p.h, attrReleaseThreshold, uintptr(unsafe.Pointer(&v)))
	return check("cuMemPoolSetAttribute", p.dev, r)
}

// TrimTo releases reserved but unused pool memory above keep bytes.
func (p MemPool) TrimTo(keep uint64) error {
	return check("cuMemPoolTrimTo", p.dev, invoke("cuMemPoolTrimTo", cuda.cuMemPoolTrimTo, p.h, uintptr(keep)))
}

// memAccessDesc is CUmemAccessDesc: a CUmemLocation {type, id} and the
// access flags.
type memAccessDesc struct {
	locType, locID int32
	flags          uint32
}

// GrantReadWrite lets device peer read and write the pool's allocations
// (cuMemPoolSetAccess with CU_MEM_ACCESS_FLAGS_PROT_READWRITE for a
// CU_MEM_LOCATION_TYPE_DEVICE location). Peer access between the devices
// does not cover stream-ordered pool memory; this does. ErrNotSupported
// when the driver lacks the entry point.
func (p MemPool) GrantReadWrite(peer int) error {
	const locationDevice, protReadWrite = 1, 3
	if cuda.cuMemPoolSetAccess == 0 {
		return check("cuMemPoolSetAccess", p.dev, ErrNotSupported)
	}
	desc := memAccessDesc{locType: locationDevice, locID: int32(peer), flags: protReadWrite}
	r := invoke("cuMemPoolSetAccess", cuda.cuMemPoolSetAccess, p.h, uintptr(unsafe.Pointer(&desc)), 1)
	return check("cuMemPoolSetAccess", p.dev, r)
}
