package launch

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rayd-go/rayd/driver"
)

// OptiXConfig configures the OptiX device contexts of this process. Its zero
// value is OptiX's defaults: warnings and errors logged, no validation, the
// disk cache where OPTIX_CACHE_PATH / OPTIX_CACHE_MAXSIZE or OptiX's default
// put it.
type OptiXConfig struct {
	// LogLevel is the most verbose OptiX log level routed to log/slog
	// (1 fatal, 2 error, 3 warning, 4 print; 0 selects 3, a negative value
	// turns the log off). Print messages are logged at slog.LevelDebug.
	LogLevel int
	// Logger receives the OptiX log (nil: slog.Default()).
	Logger *slog.Logger
	// Validation turns on OptiX's validation mode (slow).
	Validation bool
	// CacheDir moves the disk cache of compiled modules ("" keeps OptiX's
	// default). OPTIX_CACHE_PATH, when set, wins.
	CacheDir string
	// DisableCache turns the disk cache off.
	DisableCache bool
	// CacheLowBytes and CacheHighBytes set the cache's garbage-collection
	// marks when either is non-zero. OPTIX_CACHE_MAXSIZE, when set, wins.
	CacheLowBytes, CacheHighBytes uint64
}

// ErrOptiXConfigured is returned by SetOptiXConfig once a context exists.
var ErrOptiXConfigured = errors.New("launch: OptiX contexts already created with the previous configuration")

// optixState is the process-wide registry of OptiX device contexts. Its
// mutex serialises context creation across every device (OptiX device
// context creation is not safe to race); a context, once created, is
// memoised per device ordinal until ShutdownOptiX.
var optixState struct {
	mu   sync.Mutex
	cfg  OptiXConfig
	ctxs map[int]*OptiXContext
}

// SetOptiXConfig sets the configuration of contexts created from now on. It
// fails with ErrOptiXConfigured while contexts exist (ShutdownOptiX first).
func SetOptiXConfig(cfg OptiXConfig) error {
	if _, err := planCache(cfg, func(string) string { return "" }); err != nil {
		return err
	}
	optixState.mu.Lock()
	defer optixState.mu.Unlock()
	if len(optixState.ctxs) > 0 {
		return ErrOptiXConfigured
	}
	optixState.cfg = cfg
	return nil
}

// OptiXContext is the OptiX device context of one device, shared by every
// launch.Device of that ordinal in the process. It holds its own reference
// to the device's primary CUDA context, so it outlives Device.Close. Module
// and pipeline builds on one context are serialised (builds on different
// devices run concurrently); launches are not serialised by the context.
// Safe for concurrent use.
type OptiXContext struct {
	ordinal int
	cu      driver.Context
	ox      driver.OptiXContext
	created time.Duration

	buildMu   sync.Mutex // serialises module and pipeline creation on this context
	modules   map[string]*optixModule
	pipelines map[string]*OptiXPipeline
	closed    atomic.Bool
}

// OptiX returns the OptiX device context of d's device, creating it on
// first use (creation is serialised process-wide and memoised per device).
// Without libnvoptix it returns an error matching driver.ErrNoDriver.
func (d *Device) OptiX() (*OptiXContext, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	return optixContextFor(d.dev)
}

func optixContextFor(dev driver.Device) (*OptiXContext, error) {
	optixState.mu.Lock()
	defer optixState.mu.Unlock()
	if c, ok := optixState.ctxs[dev.Ordinal]; ok {
		return c, nil
	}
	c, err := newOptiXContext(dev, optixState.cfg)
	if err != nil {
		return nil, fmt.Errorf("launch: OptiX context on cuda:%d: %w", dev.Ordinal, err)
	}
	if optixState.ctxs == nil {
		optixState.ctxs = map[int]*OptiXContext{}
	}
	optixState.ctxs[dev.Ordinal] = c
	return c, nil
}

func newOptiXContext(dev driver.Device, cfg OptiXConfig) (*OptiXContext, error) {
	plan, err := planCache(cfg, os.Getenv)
	if err != nil {
		return nil, err
	}
	if err := driver.LoadOptiXTable(); err != nil {
		return nil, err
	}
	start := time.Now()
	cu, err := driver.PrimaryContext(dev)
	if err != nil {
		return nil, err
	}
	c := &OptiXContext{ordinal: dev.Ordinal, cu: cu, modules: map[string]*optixModule{}, pipelines: map[string]*OptiXPipeline{}}
	level := cfg.LogLevel
	if level == 0 {
		level = 3
	}
	if cfg.Logger != nil {
		driver.SetOptiXLogger(cfg.Logger)
	}
	err = c.with(func() error {
		var e error
		if c.ox, e = driver.CreateOptiXContext(cu, driver.OptiXContextOptions{LogLevel: level, Validation: cfg.Validation}); e != nil {
			return e
		}
		return applyCachePlan(c.ox, plan)
	})
	if err != nil {
		if c.ox.Valid() {
			_ = c.with(c.ox.Destroy)
		}
		_ = cu.Release()
		return nil, err
	}
	for _, n := range plan.notes {
		slog.Info("launch: OptiX cache setting overridden by the environment", "device", dev.Ordinal, "note", n)
	}
	c.created = time.Since(start)
	return c, nil
}

func applyCachePlan(ox driver.OptiXContext, p cachePlan) error {
	if p.setLocation != "" {
		if err := ox.SetCacheLocation(p.setLocation); err != nil {
			return err
		}
	}
	if p.setSizes {
		if err := ox.SetCacheDatabaseSizes(p.low, p.high); err != nil {
			return err
		}
	}
	if p.disable {
		return ox.SetCacheEnabled(false)
	}
	return nil
}

// with runs fn on the calling goroutine locked to its OS thread with the
// device's primary context current.
func (c *OptiXContext) with(fn func() error) error {
	if c.closed.Load() {
		return ErrClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.cu.SetCurrent(); err != nil {
		return err
	}
	return fn()
}

// Ordinal returns the device ordinal.
func (c *OptiXContext) Ordinal() int { return c.ordinal }

// CreationTime is how long creating the context took.
func (c *OptiXContext) CreationTime() time.Duration { return c.created }

// RTCoreVersion returns OPTIX_DEVICE_PROPERTY_RTCORE_VERSION (0 on GPUs
// without RT cores, such as the H200: traversal then runs on the SMs).
func (c *OptiXContext) RTCoreVersion() (int, error) {
	var v uint32
	err := c.with(func() error {
		var e error
		v, e = c.ox.Property(driver.OptiXPropRTCoreVersion)
		return e
	})
	return int(v), err
}

// CacheInfo reports the context's disk cache.
func (c *OptiXContext) CacheInfo() (OptiXCacheInfo, error) {
	var in OptiXCacheInfo
	err := c.with(func() error {
		var e error
		if in.Enabled, e = c.ox.CacheEnabled(); e != nil {
			return e
		}
		if in.Location, e = c.ox.CacheLocation(); e != nil {
			return e
		}
		in.LowBytes, in.HighBytes, e = c.ox.CacheDatabaseSizes()
		return e
	})
	return in, err
}

// ShutdownOptiX destroys every OptiX context of the process with its
// pipelines and modules, and releases their primary-context references. No
// OptiX object (pipeline, acceleration structure, query in flight) may be in
// use on any device; GAS values may still be closed afterwards. The next
// Device.OptiX creates a fresh context with the current configuration.
func ShutdownOptiX() error {
	optixState.mu.Lock()
	defer optixState.mu.Unlock()
	var errs []error
	for ord, c := range optixState.ctxs {
		errs = append(errs, c.destroy())
		delete(optixState.ctxs, ord)
	}
	return errors.Join(errs...)
}

// destroy frees the context's pipelines, modules and the context itself.
func (c *OptiXContext) destroy() error {
	c.buildMu.Lock()
	defer c.buildMu.Unlock()
	var errs []error
	err := c.with(func() error {
		for _, p := range c.pipelines {
			errs = append(errs, p.destroy())
		}
		for _, m := range c.modules {
			errs = append(errs, m.destroy())
		}
		return c.ox.Destroy()
	})
	c.closed.Store(true)
	c.pipelines, c.modules = nil, nil
	errs = append(errs, err, c.cu.Release())
	return errors.Join(errs...)
}
