package launch

import (
	"fmt"

	"github.com/rayd-go/rayd/driver"
)

// CloseOn frees an owning buffer in stream order on s, a stream of the
// buffer's device that need not be the stream that allocated it: the memory
// goes back to the device's pool once the work queued on s so far has
// completed. It lets the last user of a buffer release it without a host
// wait and without stalling the allocating stream. The caller must have
// ordered s after every other use of the buffer (by an event).
//
// Memory that did not come from the stream-ordered pool (Alloc, or
// AllocAsync without pool support), or a closed s, falls back to Close
// after s has been synchronised. Idempotent like Close; a view is only
// marked closed; a nil *Buffer is a no-op.
func (b *Buffer[T]) CloseOn(s *Stream) error {
	if b == nil {
		return nil
	}
	if s == nil || s.closed.Load() {
		return b.Close()
	}
	if s.d != b.d {
		return fmt.Errorf("launch: CloseOn: %w: buffer on %v, stream on %v", ErrWrongDevice, b.d, s.d)
	}
	if !b.owner || b.ptr == 0 || b.stream == nil {
		if b.owner && b.ptr != 0 && !b.closed.Load() {
			if err := s.Synchronize(); err != nil {
				return err
			}
		}
		return b.Close()
	}
	if b.closed.Swap(true) {
		return nil
	}
	b.d.untrack(b.ptr)
	return b.freed(s.use(func() error { return driver.MemFreeAsync(b.d.ordinal, b.ptr, s.s) }))
}

// Cast returns n elements of type T that start off bytes into b's memory,
// as a view of another element type (it owns nothing: closing it frees
// nothing, and it is valid while b is). off must be a multiple of T's size
// and the elements must lie within b; otherwise an ErrLength error.
func Cast[T, U Elem](b *Buffer[U], off, n int) (*Buffer[T], error) {
	size := elemSize[T]()
	if off < 0 || n < 0 || off%size != 0 || off+n*size > b.Bytes() {
		return nil, &LengthError{What: fmt.Sprintf("Cast(%d bytes, %d elements of %d bytes)", off, n, size), Want: b.Bytes(), Got: off + n*size}
	}
	return &Buffer[T]{d: b.d, ptr: b.ptr + driver.DevicePtr(off), n: n}, nil
}
