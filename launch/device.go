package launch

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rayd-go/rayd/driver"
)

// Device is one opened CUDA device: its primary context, an executor
// goroutine locked to its own OS thread, a per-device module cache and
// allocation counters. Safe for concurrent use.
type Device struct {
	ordinal int
	dev     driver.Device
	ctx     driver.Context

	work chan func()
	done chan struct{}

	mu      sync.Mutex
	modules map[string]*moduleEntry
	kernels map[string]*Kernel
	closed  atomic.Bool

	pool *driver.MemPool // default pool for stream-ordered allocations (nil: unsupported)
	sms  int             // multiprocessor count
	l2   int             // L2 cache bytes

	arch     int  // compute capability major*10+minor: picks the modules' cubins
	forceJIT bool // EnvPTXJIT was set at Open: every module from its PTX

	allocated atomic.Int64 // bytes currently allocated through this Device
	peak      atomic.Int64 // high-water mark of allocated since the last ResetPeak

	liveMu sync.Mutex
	live   map[driver.DevicePtr]func() // owned buffers not yet freed: their release on Close

	peerMu sync.Mutex
	peers  atomic.Value // []*Device whose memory kernels on this device may address
}

// Count returns the number of visible CUDA devices (driver.ErrNoDriver
// without a driver).
func Count() (int, error) { return driver.DeviceCount() }

// Open retains the primary context of device ordinal and starts its executor.
func Open(ordinal int) (*Device, error) {
	n, err := driver.DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("launch: device %d: %w (%d visible)", ordinal, driver.ErrInvalidDevice, n)
	}
	dev, err := driver.DeviceGet(ordinal)
	if err != nil {
		return nil, err
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return nil, err
	}
	ctx, err := driver.PrimaryContext(dev)
	if err != nil {
		return nil, err
	}
	d := &Device{
		ordinal: ordinal, dev: dev, ctx: ctx,
		work: make(chan func()), done: make(chan struct{}),
		modules: map[string]*moduleEntry{}, kernels: map[string]*Kernel{},
		arch: major*10 + minor, forceJIT: PTXJITForced(),
	}
	d.sms, _ = dev.Attribute(driver.AttrMultiprocessorCount)
	d.l2, _ = dev.Attribute(driver.AttrL2CacheSize)
	if err := d.initPool(); err != nil {
		_ = ctx.Release()
		return nil, err
	}
	ready := make(chan error, 1)
	go d.executor(ready)
	if err := <-ready; err != nil {
		_ = ctx.Release()
		return nil, err
	}
	return d, nil
}

// executor is the device's own goroutine: locked to one OS thread with the
// primary context current for its whole life.
func (d *Device) executor(ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(d.done)
	if err := d.ctx.SetCurrent(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for fn := range d.work {
		fn()
	}
}

// initPool prepares stream-ordered allocation: the device's default memory
// pool keeps freed memory reserved (release threshold = all), so allocations
// after the first are cheap. Devices or drivers without pools fall back to
// cuMemAlloc.
func (d *Device) initPool() error {
	if !driver.HasAsyncAlloc() {
		return nil
	}
	if ok, err := d.dev.Attribute(driver.AttrMemoryPoolsSupported); err != nil || ok == 0 {
		return nil
	}
	pool, err := driver.DefaultMemPool(d.dev)
	if err != nil {
		return err
	}
	if err := pool.SetReleaseThreshold(^uint64(0)); err != nil {
		return err
	}
	d.pool = &pool
	return nil
}

// TrimPool returns the memory the stream-ordered pool holds in reserve to
// the device (after the device's pending work), so that MemInfo reflects
// only live allocations.
func (d *Device) TrimPool() error {
	if d.pool == nil {
		return nil
	}
	return d.with(func() error {
		if err := d.ctx.Synchronize(); err != nil {
			return err
		}
		return d.pool.TrimTo(0)
	})
}

// SMs returns the device's multiprocessor count.
func (d *Device) SMs() int { return d.sms }

// L2Bytes returns the device's L2 cache size in bytes.
func (d *Device) L2Bytes() int { return d.l2 }

// Ordinal returns the device ordinal.
func (d *Device) Ordinal() int { return d.ordinal }

// String returns "cuda:N".
func (d *Device) String() string { return fmt.Sprintf("cuda:%d", d.ordinal) }

// Do runs fn on the device's executor goroutine (its OS thread has the
// device's context current) and returns fn's error. Calls from several
// goroutines are serialised in arrival order.
func (d *Device) Do(fn func() error) error {
	if d.closed.Load() {
		return ErrClosed
	}
	errc := make(chan error, 1)
	select {
	case d.work <- func() { errc <- fn() }:
	case <-d.done:
		return ErrClosed
	}
	return <-errc
}

// with runs fn on the calling goroutine, locked to its OS thread with the
// device's context current. It is the cheap path for short driver calls.
func (d *Device) with(fn func() error) error {
	if d.closed.Load() {
		return ErrClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.ctx.SetCurrent(); err != nil {
		return err
	}
	return fn()
}

// track registers an owned allocation's release for Close; untrack removes
// it once the buffer frees itself.
func (d *Device) track(p driver.DevicePtr, release func()) {
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	if d.live == nil {
		d.live = map[driver.DevicePtr]func(){}
	}
	d.live[p] = release
}

func (d *Device) untrack(p driver.DevicePtr) {
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	delete(d.live, p)
}

// Synchronize waits for all work on the device (cuCtxSynchronize).
func (d *Device) Synchronize() error { return d.with(d.ctx.Synchronize) }

// MemInfo returns the device's free and total memory in bytes.
func (d *Device) MemInfo() (free, total uint64, err error) {
	err = d.with(func() error {
		var e error
		free, total, e = d.ctx.MemInfo()
		return e
	})
	return free, total, err
}

// Allocated returns the bytes currently allocated through this Device and
// the high-water mark since the last ResetPeak.
func (d *Device) Allocated() (current, peak int64) { return d.allocated.Load(), d.peak.Load() }

// ResetPeak sets the high-water mark to the current allocation.
func (d *Device) ResetPeak() { d.peak.Store(d.allocated.Load()) }

func (d *Device) account(delta int64) {
	cur := d.allocated.Add(delta)
	for {
		p := d.peak.Load()
		if cur <= p || d.peak.CompareAndSwap(p, cur) {
			return
		}
	}
}

// Close frees the owned buffers still open on the device (after its work;
// their Close is then a no-op and using them is an error), unloads the
// device's modules, stops the executor and releases the primary context.
// Without the first step, closing a scene before the device buffers it
// handed out would pin their memory for as long as anything else keeps the
// primary context (another scene, another Device of the same ordinal).
// Streams should be closed first. Idempotent.
func (d *Device) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	var errs []error
	errc := make(chan error, 1)
	d.liveMu.Lock()
	orphans := d.live
	d.live = nil
	d.liveMu.Unlock()
	d.work <- func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		var err error
		// Buffers still open belong to this device: free them now, after
		// the device's work, so that closing a device before its buffers
		// does not pin their memory while another holder keeps the primary
		// context alive. Their Close is then a no-op.
		if len(orphans) > 0 {
			err = d.ctx.Synchronize()
			for _, release := range orphans {
				release()
			}
		}
		for _, k := range d.kernels {
			k.args.Free()
		}
		for _, m := range d.modules {
			if m.err == nil {
				e := m.mod.Unload()
				if e != nil { // one retry: a failed unload pins the module's memory
					e = m.mod.Unload()
				}
				if e != nil && err == nil {
					err = e
				}
			}
		}
		d.modules, d.kernels = nil, nil
		errc <- err
	}
	errs = append(errs, <-errc)
	close(d.work)
	<-d.done
	errs = append(errs, d.ctx.Release())
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
