package driver

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// OptiXContext is an OptixDeviceContext created on one CUDA context. Its
// methods may be called from any OS thread; callers that also issue CUDA
// calls bind the CUDA context first (package launch does).
type OptiXContext struct {
	h   uintptr
	dev int
}

// OptiXContextOptions configures CreateOptiXContext.
type OptiXContextOptions struct {
	// LogLevel is the most verbose OptiX log level routed to log/slog:
	// 0 off, 1 fatal, 2 error, 3 warning, 4 print.
	LogLevel int
	// Validation turns on OptiX's validation mode (slow; for debugging).
	Validation bool
}

// CreateOptiXContext creates an OptiX device context on cu
// (optixDeviceContextCreate with an explicit CUcontext). Its log messages go
// to the logger set by SetOptiXLogger (slog.Default() when none), tagged
// with the device ordinal. Creation is not serialised here; package launch
// serialises it process-wide.
func CreateOptiXContext(cu Context, opt OptiXContextOptions) (OptiXContext, error) {
	if err := LoadOptiXTable(); err != nil {
		return OptiXContext{}, err
	}
	o := optixDeviceContextOptions{logCallbackLevel: int32(min(max(opt.LogLevel, 0), 4))}
	if o.logCallbackLevel > 0 {
		o.logCallbackFunction = optixLogCallbackPtr()
		o.logCallbackData = uintptr(cu.dev.Ordinal + 1) // an integer key, never a Go pointer
	}
	if opt.Validation {
		o.validationMode = 0xFFFFFFFF
	}
	var h uintptr
	r := invoke("optixDeviceContextCreate", ox.optixDeviceContextCreate, cu.h,
		uintptr(unsafe.Pointer(&o)), uintptr(unsafe.Pointer(&h)))
	if err := optixCheck("optixDeviceContextCreate", cu.dev.Ordinal, r); err != nil {
		return OptiXContext{}, err
	}
	return OptiXContext{h: h, dev: cu.dev.Ordinal}, nil
}

// Device returns the ordinal of the context's device.
func (c OptiXContext) Device() int { return c.dev }

// Valid reports whether c holds a created context.
func (c OptiXContext) Valid() bool { return c.h != 0 }

// Destroy destroys the context. Every module, program group, pipeline and
// acceleration structure of it must be unused.
func (c OptiXContext) Destroy() error {
	return optixCheck("optixDeviceContextDestroy", c.dev,
		invoke("optixDeviceContextDestroy", ox.optixDeviceContextDestroy, c.h))
}

// Property reads a 4-byte device property (OptiXProp*).
func (c OptiXContext) Property(prop int) (uint32, error) {
	var v uint32
	r := invoke("optixDeviceContextGetProperty", ox.optixDeviceContextGetProperty, c.h, uintptr(prop),
		uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	return v, optixCheck("optixDeviceContextGetProperty", c.dev, r)
}

// SetCacheEnabled turns the disk cache of compiled modules on or off. The
// environment variable OPTIX_CACHE_MAXSIZE=0 disables the cache in a way
// this call does not undo.
func (c OptiXContext) SetCacheEnabled(on bool) error {
	v := uintptr(0)
	if on {
		v = 1
	}
	return optixCheck("optixDeviceContextSetCacheEnabled", c.dev,
		invoke("optixDeviceContextSetCacheEnabled", ox.optixDeviceContextSetCacheEnabled, c.h, v))
}

// SetCacheLocation moves the disk cache to dir (OPTIX_CACHE_PATH, when set,
// takes precedence over it). Caching is disabled if dir is unusable.
func (c OptiXContext) SetCacheLocation(dir string) error {
	p := cString(dir)
	r := invoke("optixDeviceContextSetCacheLocation", ox.optixDeviceContextSetCacheLocation, c.h, uintptr(unsafe.Pointer(&p[0])))
	runtime.KeepAlive(p)
	return optixCheck("optixDeviceContextSetCacheLocation", c.dev, r)
}

// SetCacheDatabaseSizes sets the cache's garbage-collection marks in bytes
// (0, 0 disables collection; OPTIX_CACHE_MAXSIZE overrides them).
func (c OptiXContext) SetCacheDatabaseSizes(low, high uint64) error {
	return optixCheck("optixDeviceContextSetCacheDatabaseSizes", c.dev,
		invoke("optixDeviceContextSetCacheDatabaseSizes", ox.optixDeviceContextSetCacheDatabaseSizes, c.h, uintptr(low), uintptr(high)))
}

// CacheEnabled reports whether the disk cache is on.
func (c OptiXContext) CacheEnabled() (bool, error) {
	var v int32
	r := invoke("optixDeviceContextGetCacheEnabled", ox.optixDeviceContextGetCacheEnabled, c.h, uintptr(unsafe.Pointer(&v)))
	return v != 0, optixCheck("optixDeviceContextGetCacheEnabled", c.dev, r)
}

// CacheLocation returns the cache directory ("" when the cache is disabled).
func (c OptiXContext) CacheLocation() (string, error) {
	buf := make([]byte, 4096)
	r := invoke("optixDeviceContextGetCacheLocation", ox.optixDeviceContextGetCacheLocation, c.h,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if err := optixCheck("optixDeviceContextGetCacheLocation", c.dev, r); err != nil {
		return "", err
	}
	return goString(&buf[0]), nil
}

// CacheDatabaseSizes returns the cache's low and high water marks in bytes.
func (c OptiXContext) CacheDatabaseSizes() (low, high uint64, err error) {
	r := invoke("optixDeviceContextGetCacheDatabaseSizes", ox.optixDeviceContextGetCacheDatabaseSizes, c.h,
		uintptr(unsafe.Pointer(&low)), uintptr(unsafe.Pointer(&high)))
	return low, high, optixCheck("optixDeviceContextGetCacheDatabaseSizes", c.dev, r)
}

// --- log callback -----------------------------------------------------------

var (
	optixLogOnce   sync.Once
	optixLogFn     uintptr
	optixLogger    atomic.Pointer[slog.Logger]
	optixLogCount  atomic.Int64
	optixLogRecent atomic.Pointer[string]
)

// SetOptiXLogger routes the OptiX log of every context to l (nil restores
// slog.Default()). It may be called at any time.
func SetOptiXLogger(l *slog.Logger) { optixLogger.Store(l) }

// OptiXLogMessages returns how many OptiX log messages have been received
// in this process and the latest one (for diagnostics and tests).
func OptiXLogMessages() (int64, string) {
	last := ""
	if p := optixLogRecent.Load(); p != nil {
		last = *p
	}
	return optixLogCount.Load(), last
}

// optixLogCallbackPtr returns the C function pointer of the log callback. It
// is created once per process: purego callbacks are never freed and a
// process may create at most 2000.
func optixLogCallbackPtr() uintptr {
	optixLogOnce.Do(func() { optixLogFn = purego.NewCallback(optixLog) })
	return optixLogFn
}

// optixLog is the OptixLogCallback: void (unsigned int level, const char*
// tag, const char* message, void* cbdata). OptiX may call it from threads it
// created; it only formats and hands the record to slog, never calls back
// into OptiX, and takes no lock of this package.
func optixLog(level uint32, tag, msg *byte, data uintptr) {
	text := goString(msg)
	optixLogCount.Add(1)
	optixLogRecent.Store(&text)
	l := optixLogger.Load()
	if l == nil {
		l = slog.Default()
	}
	l.Log(context.Background(), OptiXSlogLevel(level), text,
		slog.String("tag", goString(tag)), slog.Int("optix_level", int(level)), slog.Int("device", int(data)-1))
}

// OptiXSlogLevel maps an OptiX log level to a slog level: 1 fatal and 2
// error → Error, 3 warning → Warn, 4 print (and anything else) → Debug.
func OptiXSlogLevel(level uint32) slog.Level {
	switch level {
	case 1, 2:
		return slog.LevelError
	case 3:
		return slog.LevelWarn
	}
	return slog.LevelDebug
}
