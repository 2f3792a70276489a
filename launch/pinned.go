package launch

import (
	"fmt"
	"sync/atomic"

	"github.com/rayd-go/rayd/driver"
)

// Pinned is page-locked host memory allocated in a device's context:
// copies from it to the device (Buffer.UploadPinned) are truly
// asynchronous, so the host must not write it, nor Close it, until a copy
// that reads it has completed (an Event recorded after the copy says
// when). Its memory is valid until Close, or until its device closes
// (which frees memory still open).
type Pinned[T Elem] struct {
	d      *Device
	s      []T
	closed atomic.Bool
}

// AllocPinned allocates n uninitialised elements of page-locked host
// memory for copies to d. n == 0 gives an empty, valid Pinned with no
// allocation.
func AllocPinned[T Elem](d *Device, n int) (*Pinned[T], error) {
	if n < 0 {
		return nil, fmt.Errorf("launch: AllocPinned: negative length %d", n)
	}
	p := &Pinned[T]{d: d}
	err := d.with(func() error {
		var e error
		p.s, e = driver.HostAllocOf[T](n)
		return e
	})
	if err != nil {
		return nil, fmt.Errorf("launch: AllocPinned %d bytes for %v: %w", n*elemSize[T](), d, err)
	}
	if n > 0 {
		d.track(p.key(), p.orphaned)
	}
	return p, nil
}

// key is the allocation's key among the device's live allocations (host
// and device addresses share one unified address space).
func (p *Pinned[T]) key() driver.DevicePtr { return driver.DevicePtr(driver.HostAddr(p.s)) }

// orphaned frees p when its device closes first (see Buffer.orphaned).
func (p *Pinned[T]) orphaned() {
	if p.closed.Swap(true) {
		return
	}
	_ = driver.HostFreeOf(p.s)
}

// Slice is the memory as a slice (nil once closed). It must not be used
// after Close.
func (p *Pinned[T]) Slice() []T {
	if p.closed.Load() {
		return nil
	}
	return p.s
}

// Len returns the number of elements.
func (p *Pinned[T]) Len() int { return len(p.s) }

// Device returns the device the memory was allocated for.
func (p *Pinned[T]) Device() *Device { return p.d }

// Close frees the memory. The caller must ensure no queued copy still
// reads it. Idempotent, and a no-op on a nil *Pinned.
func (p *Pinned[T]) Close() error {
	if p == nil || p.closed.Swap(true) || len(p.s) == 0 {
		return nil
	}
	p.d.untrack(p.key())
	return p.d.with(func() error { return driver.HostFreeOf(p.s) })
}

// UploadPinned queues an asynchronous copy of src into the first src.Len()
// elements of b on s. The copy reads src while it runs: write or free src
// only once it has completed (an Event recorded on s after this call). src
// must belong to b's device.
func (b *Buffer[T]) UploadPinned(s *Stream, src *Pinned[T]) error {
	if err := b.check(s); err != nil {
		return err
	}
	if src.closed.Load() {
		return ErrClosed
	}
	if src.d != b.d {
		return fmt.Errorf("%w: pinned memory for %v, buffer on %v", ErrWrongDevice, src.d, b.d)
	}
	if src.Len() > b.n {
		return &LengthError{What: "UploadPinned", Want: b.n, Got: src.Len()}
	}
	if src.Len() == 0 {
		return nil
	}
	return s.use(func() error { return driver.CopyHtoDAsync(b.d.ordinal, b.ptr, src.s, s.s) })
}

// ViewAs returns elements [off, off+n) of b's memory read as U (b's bytes
// reinterpreted; off and n count elements of U) as a view that shares b's
// memory and owns nothing, like View. A range past b's bytes or an address
// not aligned to U's size is an ErrLength error.
func ViewAs[U, T Elem](b *Buffer[T], off, n int) (*Buffer[U], error) {
	su := elemSize[U]()
	if off < 0 || n < 0 || (off+n)*su > b.Bytes() {
		return nil, &LengthError{What: fmt.Sprintf("ViewAs(%d, %d) of %d-byte elements", off, n, su), Want: b.Bytes(), Got: (off + n) * su}
	}
	ptr := b.ptr + driver.DevicePtr(off*su)
	if uint64(ptr)%uint64(su) != 0 {
		return nil, &LengthError{What: fmt.Sprintf("ViewAs at address %#x, not aligned to %d bytes", uint64(ptr), su), Want: su, Got: int(uint64(ptr) % uint64(su))}
	}
	return &Buffer[U]{d: b.d, ptr: ptr, n: n}, nil
}
