package driver

import "unsafe"

// Stream is a CUDA stream handle. rayd-go never uses the legacy null stream.
type Stream struct {
	h   uintptr
	dev int
}

// Stream creation flags.
const (
	StreamDefault     = 0
	StreamNonBlocking = 1 // no implicit synchronisation with the null stream
)

// NewStream creates a stream in the current context (cuStreamCreate).
func NewStream(dev int, flags uint32) (Stream, error) {
	var h uintptr
	r := invoke("cuStreamCreate", cuda.cuStreamCreate, uintptr(unsafe.Pointer(&h)), uintptr(flags))
	return Stream{h: h, dev: dev}, check("cuStreamCreate", dev, r)
}

// Handle returns the raw CUstream.
func (s Stream) Handle() uintptr { return s.h }

// Destroy destroys the stream after its pending work completes.
func (s Stream) Destroy() error {
	return check("cuStreamDestroy_v2", s.dev, invoke("cuStreamDestroy_v2", cuda.cuStreamDestroy_v2, s.h))
}

// Synchronize blocks until all work queued on s has completed.
func (s Stream) Synchronize() error {
	return check("cuStreamSynchronize", s.dev, invoke("cuStreamSynchronize", cuda.cuStreamSynchronize, s.h))
}

// Query reports whether all work on s has completed (false, nil while pending).
func (s Stream) Query() (bool, error) {
	r := invoke("cuStreamQuery", cuda.cuStreamQuery, s.h)
	if r == ErrNotReady {
		return false, nil
	}
	return r == Success, check("cuStreamQuery", s.dev, r)
}

// WaitEvent makes future work on s wait for e (cuStreamWaitEvent).
func (s Stream) WaitEvent(e Event) error {
	return check("cuStreamWaitEvent", s.dev, invoke("cuStreamWaitEvent", cuda.cuStreamWaitEvent, s.h, e.h, 0))
}

// Event is a CUDA event handle.
type Event struct {
	h   uintptr
	dev int
}

// Event creation flags.
const (
	EventDefault       = 0
	EventBlockingSync  = 1
	EventDisableTiming = 2
)

// NewEvent creates an event in the current context (cuEventCreate).
func NewEvent(dev int, flags uint32) (Event, error) {
	var h uintptr
	r := invoke("cuEventCreate", cuda.cuEventCreate, uintptr(unsafe.Pointer(&h)), uintptr(flags))
	return Event{h: h, dev: dev}, check("cuEventCreate", dev, r)
}

// Record records e on s (cuEventRecord).
func (e Event) Record(s Stream) error {
	return check("cuEventRecord", e.dev, invoke("cuEventRecord", cuda.cuEventRecord, e.h, s.h))
}

// Synchronize blocks until e has completed.
func (e Event) Synchronize() error {
	return check("cuEventSynchronize", e.dev, invoke("cuEventSynchronize", cuda.cuEventSynchronize, e.h))
}

// Query reports whether e has completed (false, nil while pending).
func (e Event) Query() (bool, error) {
	r := invoke("cuEventQuery", cuda.cuEventQuery, e.h)
	if r == ErrNotReady {
		return false, nil
	}
	return r == Success, check("cuEventQuery", e.dev, r)
}

// Elapsed returns the milliseconds between two completed timing events.
func Elapsed(start, end Event) (float32, error) {
	var ms float32
	name, fn := "cuEventElapsedTime_v2", cuda.cuEventElapsedTime_v2
	if fn == 0 {
		name, fn = "cuEventElapsedTime", cuda.cuEventElapsedTime
	}
	r := invoke(name, fn, uintptr(unsafe.Pointer(&ms)), start.h, end.h)
	return ms, check(name, start.dev, r)
}

// Destroy destroys the event.
func (e Event) Destroy() error {
	return check("cuEventDestroy_v2", e.dev, invoke("cuEventDestroy_v2", cuda.cuEventDestroy_v2, e.h))
}
