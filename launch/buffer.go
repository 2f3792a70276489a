package launch

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/rayd-go/rayd/driver"
)

// Elem is the set of element types a device Buffer holds.
type Elem interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~int32 | ~uint32 | ~float32 | ~uint64 | ~int64 | ~float64
}

// Buffer is typed device memory on one device. A Buffer from Alloc owns its
// memory; a View shares its parent's memory and owns nothing.
type Buffer[T Elem] struct {
	d      *Device
	ptr    driver.DevicePtr
	n      int
	owner  bool
	stream *Stream // set for stream-ordered allocations: Close frees on it
	closed atomic.Bool
}

func elemSize[T Elem]() int { return driver.SizeOf[T]() }

// Alloc allocates n uninitialised elements on d. n == 0 gives an empty,
// valid buffer with no allocation.
func Alloc[T Elem](d *Device, n int) (*Buffer[T], error) {
	if n < 0 {
		return nil, fmt.Errorf("launch: Alloc: negative length %d", n)
	}
	b := &Buffer[T]{d: d, n: n, owner: true}
	if n == 0 {
		return b, d.with(func() error { return nil })
	}
	bytes := uint64(n) * uint64(elemSize[T]())
	err := d.with(func() error {
		var e error
		b.ptr, e = driver.MemAlloc(d.ordinal, bytes)
		return e
	})
	if err != nil {
		return nil, fmt.Errorf("launch: Alloc %d bytes on %v: %w", bytes, d, err)
	}
	d.account(int64(bytes))
	d.track(b.ptr, b.orphaned)
	return b, nil
}

// AllocAsync allocates n uninitialised elements in stream order on s (from
// the device's memory pool, which keeps freed memory for reuse): the memory
// may be used by work queued on s after this call, and Close frees it in
// s's order. Other streams must be ordered after s by an event before using
// it. Without pool support it falls back to Alloc.
func AllocAsync[T Elem](s *Stream, n int) (*Buffer[T], error) {
	d := s.d
	if d.pool == nil || n == 0 {
		return Alloc[T](d, n)
	}
	if n < 0 {
		return nil, fmt.Errorf("launch: AllocAsync: negative length %d", n)
	}
	b := &Buffer[T]{d: d, n: n, owner: true, stream: s}
	bytes := uint64(n) * uint64(elemSize[T]())
	err := s.use(func() error {
		var e error
		b.ptr, e = driver.MemAllocAsync(d.ordinal, bytes, s.s)
		return e
	})
	if err != nil {
		return nil, fmt.Errorf("launch: AllocAsync %d bytes on %v: %w", bytes, d, err)
	}
	d.account(int64(bytes))
	d.track(b.ptr, b.orphaned)
	return b, nil
}

// orphaned frees b when its device closes first (called by Device.Close on
// the executor, with the context current and the device's work done). A
// buffer that is freeing itself at the same moment is left to that.
func (b *Buffer[T]) orphaned() {
	if b.closed.Swap(true) {
		return
	}
	if driver.MemFree(b.d.ordinal, b.ptr) == nil {
		b.d.account(-int64(b.Bytes()))
	}
}

// Len returns the number of elements.
func (b *Buffer[T]) Len() int { return b.n }

// Bytes returns the size in bytes.
func (b *Buffer[T]) Bytes() int { return b.n * elemSize[T]() }

// Device returns the owning device.
func (b *Buffer[T]) Device() *Device { return b.d }

// Addr returns the device address (0 for an empty buffer).
func (b *Buffer[T]) Addr() uint64 { return uint64(b.ptr) }

// View returns elements [off, off+n) as a buffer sharing b's memory (a
// view owns nothing: closing it frees nothing). An out-of-range request is an
// ErrLength error.
func (b *Buffer[T]) View(off, n int) (*Buffer[T], error) {
	if off < 0 || n < 0 || off+n > b.n {
		return nil, &LengthError{What: fmt.Sprintf("View(%d, %d)", off, n), Want: b.n, Got: off + n}
	}
	return &Buffer[T]{d: b.d, ptr: b.ptr + driver.DevicePtr(off*elemSize[T]()), n: n}, nil
}

func (b *Buffer[T]) check(s *Stream) error {
	if b.closed.Load() {
		return ErrClosed
	}
	if s.d != b.d {
		return fmt.Errorf("%w: buffer on %v, stream on %v", ErrWrongDevice, b.d, s.d)
	}
	return nil
}

// Upload queues a copy of src into the first len(src) elements on s. src may
// be reused when Upload returns (pageable memory is staged by the driver).
func (b *Buffer[T]) Upload(s *Stream, src []T) error {
	if err := b.check(s); err != nil {
		return err
	}
	if len(src) > b.n {
		return &LengthError{What: "Upload", Want: b.n, Got: len(src)}
	}
	return s.use(func() error { return driver.CopyHtoDAsync(b.d.ordinal, b.ptr, src, s.s) })
}

// Download copies the first len(dst) elements into dst after the work queued
// on s, and returns once dst holds them.
func (b *Buffer[T]) Download(s *Stream, dst []T) error {
	if err := b.check(s); err != nil {
		return err
	}
	if len(dst) > b.n {
		return &LengthError{What: "Download", Want: b.n, Got: len(dst)}
	}
	return s.use(func() error {
		if err := driver.CopyDtoHAsync(b.d.ordinal, dst, b.ptr, s.s); err != nil {
			return err
		}
		return s.s.Synchronize()
	})
}

// Memset32 sets every element to the 32-bit pattern v (4-byte elements only).
func (b *Buffer[T]) Memset32(s *Stream, v uint32) error {
	if err := b.check(s); err != nil {
		return err
	}
	if elemSize[T]() != 4 {
		return fmt.Errorf("launch: Memset32 on %d-byte elements", elemSize[T]())
	}
	return s.use(func() error { return driver.MemsetD32Async(b.d.ordinal, b.ptr, v, uint64(b.n), s.s) })
}

// Memset8 sets every byte of the buffer to v.
func (b *Buffer[T]) Memset8(s *Stream, v uint8) error {
	if err := b.check(s); err != nil {
		return err
	}
	return s.use(func() error { return driver.MemsetD8Async(b.d.ordinal, b.ptr, v, uint64(b.Bytes()), s.s) })
}

// CopyFrom queues a copy of src (same length, on any device) into b on s.
// Across devices it is a peer copy (cuMemcpyPeerAsync).
func (b *Buffer[T]) CopyFrom(s *Stream, src *Buffer[T]) error {
	if b.closed.Load() || src.closed.Load() || s.closed.Load() {
		return ErrClosed
	}
	if src.n != b.n {
		return &LengthError{What: "CopyFrom", Want: b.n, Got: src.n}
	}
	if b.n == 0 {
		return nil
	}
	bytes := uint64(b.Bytes())
	if src.d == b.d {
		return s.use(func() error { return driver.CopyDtoDAsync(s.d.ordinal, b.ptr, src.ptr, bytes, s.s) })
	}
	return s.use(func() error { return driver.CopyPeerAsync(b.ptr, b.d.ctx, src.ptr, src.d.ctx, bytes, s.s) })
}

// Close frees an owning buffer (a view is only marked closed). Idempotent,
// and a no-op on a nil *Buffer. The caller must ensure no queued work still
// uses the memory.
func (b *Buffer[T]) Close() error {
	if b == nil || b.closed.Swap(true) || !b.owner || b.ptr == 0 {
		return nil
	}
	b.d.untrack(b.ptr)
	var err error
	if b.stream != nil && !b.stream.closed.Load() {
		err = b.d.with(func() error { return driver.MemFreeAsync(b.d.ordinal, b.ptr, b.stream.s) })
	} else {
		err = b.d.with(func() error { return driver.MemFree(b.d.ordinal, b.ptr) })
	}
	return b.freed(err)
}

// freed settles a release: on success the allocation leaves the account;
// a failed release is retried once, synchronously after the device's work
// (cuMemFree accepts pool allocations too), so that one failed call (a
// context bind, a transient driver error) does not pin the memory for the
// life of the process. The error is returned only when the retry fails too.
func (b *Buffer[T]) freed(err error) error {
	if err != nil {
		retry := b.d.with(func() error {
			if e := b.d.ctx.Synchronize(); e != nil {
				return e
			}
			return driver.MemFree(b.d.ordinal, b.ptr)
		})
		if retry != nil {
			return errors.Join(err, retry)
		}
	}
	b.d.account(-int64(b.Bytes()))
	return nil
}

// devicePointer is what a kernel pointer argument accepts.
type devicePointer interface {
	kernelPtr() (driver.DevicePtr, *Device, bool)
}

func (b *Buffer[T]) kernelPtr() (driver.DevicePtr, *Device, bool) {
	return b.ptr, b.d, b.closed.Load()
}
