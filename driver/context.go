package driver

import (
	"errors"
	"unsafe"
)

// Context is a CUDA context (here always a device's primary context). The
// current context is a property of the calling OS thread: lock the goroutine
// to its thread (runtime.LockOSThread) before SetCurrent and keep it locked
// while issuing calls for that context.
type Context struct {
	h   uintptr
	dev Device
}

// PrimaryContext retains d's primary context (cuDevicePrimaryCtxRetain).
// Balance it with Release.
func PrimaryContext(d Device) (Context, error) {
	var h uintptr
	r := invoke("cuDevicePrimaryCtxRetain", cuda.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&h)), uintptr(d.handle))
	if err := check("cuDevicePrimaryCtxRetain", d.Ordinal, r); err != nil {
		return Context{}, err
	}
	return Context{h: h, dev: d}, nil
}

// Device returns the context's device.
func (c Context) Device() Device { return c.dev }

// Handle returns the raw CUcontext (for diagnostics and peer copies).
func (c Context) Handle() uintptr { return c.h }

// Release releases the primary context retained by PrimaryContext.
func (c Context) Release() error {
	return check("cuDevicePrimaryCtxRelease_v2", c.dev.Ordinal,
		invoke("cuDevicePrimaryCtxRelease_v2", cuda.cuDevicePrimaryCtxRelease_v2, uintptr(c.dev.handle)))
}

// SetCurrent binds c to the calling OS thread (cuCtxSetCurrent).
func (c Context) SetCurrent() error {
	return check("cuCtxSetCurrent", c.dev.Ordinal, invoke("cuCtxSetCurrent", cuda.cuCtxSetCurrent, c.h))
}

// CurrentContextHandle returns the raw CUcontext bound to the calling thread
// (0 when none).
func CurrentContextHandle() (uintptr, error) {
	var h uintptr
	r := invoke("cuCtxGetCurrent", cuda.cuCtxGetCurrent, uintptr(unsafe.Pointer(&h)))
	return h, check("cuCtxGetCurrent", -1, r)
}

// Synchronize waits for all work of the current context (cuCtxSynchronize).
// c must be current on the calling thread.
func (c Context) Synchronize() error {
	return check("cuCtxSynchronize", c.dev.Ordinal, invoke("cuCtxSynchronize", cuda.cuCtxSynchronize))
}

// EnablePeerAccess lets the current context c address peer's memory. An
// already enabled pair is not an error. c must be current.
func (c Context) EnablePeerAccess(peer Context) error {
	err := check("cuCtxEnablePeerAccess", c.dev.Ordinal, invoke("cuCtxEnablePeerAccess", cuda.cuCtxEnablePeerAccess, peer.h, 0))
	if errors.Is(err, ErrPeerAccessEnabled) {
		return nil
	}
	return err
}

// DisablePeerAccess revokes access enabled by EnablePeerAccess. c must be current.
func (c Context) DisablePeerAccess(peer Context) error {
	return check("cuCtxDisablePeerAccess", c.dev.Ordinal, invoke("cuCtxDisablePeerAccess", cuda.cuCtxDisablePeerAccess, peer.h))
}

// MemInfo returns free and total bytes of c's device. c must be current.
func (c Context) MemInfo() (free, total uint64, err error) {
	r := invoke("cuMemGetInfo_v2", cuda.cuMemGetInfo_v2, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return free, total, check("cuMemGetInfo_v2", c.dev.Ordinal, r)
}
