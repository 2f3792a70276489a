package launch

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/ptx"
)

// OptiXModuleOptions are the compile options of an OptiX module; every
// pipeline built from the module shares them. Pipelines trace a single
// triangle GAS, or with Instancing one IAS over triangle GASes, and have no
// exception programs.
type OptiXModuleOptions struct {
	PayloadValues   int    // payload words of the largest trace call (≤ 32)
	AttributeValues int    // attribute words (0: 2, the barycentrics of built-in triangles)
	ParamsName      string // the __constant__ launch-parameter variable ("": "params")
	// Instancing compiles for single-level instancing (an IAS over GASes,
	// traversable graph depth 2) instead of a single GAS.
	Instancing bool
}

// graphDepth is the pipeline's maximum traversable graph depth.
func (o OptiXModuleOptions) graphDepth() uint32 {
	if o.Instancing {
		return 2
	}
	return 1
}

func (o OptiXModuleOptions) compile() driver.OptiXCompileOptions {
	name := o.ParamsName
	if name == "" {
		name = "params"
	}
	graph := driver.OptiXGraphAllowSingleGAS
	if o.Instancing {
		graph = driver.OptiXGraphAllowSingleLevelInstancing
	}
	return driver.OptiXCompileOptions{PayloadValues: o.PayloadValues, AttributeValues: max(o.AttributeValues, 2),
		ParamsName: name, TraversableGraph: graph, TrianglesOnly: true}
}

// OptiXPipelineSpec names an embedded PTX module (package ptx) and the
// programs of one pipeline: a raygen, a miss and a hit group of a closest-hit
// and an optional any-hit program, with full entry names
// ("__raygen__intersect").
type OptiXPipelineSpec struct {
	Module     string
	Options    OptiXModuleOptions
	Raygen     string
	Miss       string
	ClosestHit string
	AnyHit     string // "" for none
}

func (s OptiXPipelineSpec) key() string {
	return strings.Join([]string{s.Module, fmt.Sprintf("%+v", s.Options.compile()), s.Raygen, s.Miss, s.ClosestHit, s.AnyHit}, "|")
}

// optixModule is one compiled module of a context (or the error of trying).
type optixModule struct {
	opts OptiXModuleOptions
	mod  driver.OptiXModule
	err  error
	took time.Duration
}

func (m *optixModule) destroy() error {
	if m.err != nil {
		return nil
	}
	return m.mod.Destroy()
}

// OptiXPipeline is a linked pipeline with its shader binding table (one
// header-only record per program group). Launch is safe for concurrent use:
// OptiX does not support concurrent optixLaunch calls on one pipeline, so
// Launch serialises the (asynchronous, short) call per pipeline; the GPU
// work of launches on different streams may still overlap.
type OptiXPipeline struct {
	ctx    *OptiXContext
	spec   OptiXPipelineSpec
	pipe   driver.OptiXPipeline
	groups []driver.OptiXProgramGroup
	sbtMem driver.DevicePtr
	sbt    driver.OptiXShaderBindingTable
	stack  uint32 // continuation stack bytes
	took   time.Duration

	mu sync.Mutex
}

// module compiles (once per context) the embedded PTX module name with opts.
// buildMu must be held.
func (c *OptiXContext) module(name string, opts OptiXModuleOptions) (*optixModule, error) {
	if m, ok := c.modules[name]; ok {
		if m.err == nil && m.opts.compile() != opts.compile() {
			return nil, fmt.Errorf("launch: OptiX module %s: options %+v differ from the compiled %+v", name, opts, m.opts)
		}
		return m, m.err
	}
	m := &optixModule{opts: opts}
	src, err := ptx.Load(name)
	if err == nil {
		start := time.Now()
		var log string
		err = c.with(func() error {
			var e error
			m.mod, log, e = c.ox.CreateModule(opts.compile(), src.Image)
			return e
		})
		m.took = time.Since(start)
		if err == nil && strings.TrimSpace(log) != "" {
			slog.Debug("launch: OptiX module compiled", "device", c.ordinal, "module", name, "log", log)
		}
	}
	if err != nil {
		m.err = fmt.Errorf("launch: OptiX module %s on cuda:%d: %w", name, c.ordinal, err)
		return nil, m.err
	}
	c.modules[name] = m
	return m, nil
}

// Pipeline returns the pipeline of spec on c, building it (and its module)
// on first use. Builds on one context are serialised; the result is
// memoised for the context's life.
func (c *OptiXContext) Pipeline(spec OptiXPipelineSpec) (*OptiXPipeline, error) {
	if spec.Module == "" || spec.Raygen == "" || spec.Miss == "" || spec.ClosestHit == "" {
		return nil, fmt.Errorf("launch: OptiX pipeline %+v: module, raygen, miss and closest hit are required", spec)
	}
	c.buildMu.Lock()
	defer c.buildMu.Unlock()
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if p, ok := c.pipelines[spec.key()]; ok {
		return p, nil
	}
	m, err := c.module(spec.Module, spec.Options)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	p := &OptiXPipeline{ctx: c, spec: spec}
	if err := c.with(func() error { return p.build(m) }); err != nil {
		_ = c.with(p.destroy)
		return nil, fmt.Errorf("launch: OptiX pipeline %s/%s on cuda:%d: %w", spec.Module, spec.Raygen, c.ordinal, err)
	}
	p.took = time.Since(start)
	c.pipelines[spec.key()] = p
	return p, nil
}

// build creates the program groups, the pipeline, its stack sizes and SBT.
// The caller binds the context.
func (p *OptiXPipeline) build(m *optixModule) error {
	ox := p.ctx.ox
	descs := []driver.OptiXProgramDesc{
		{Kind: driver.OptiXRaygen, Module: m.mod, Entry: p.spec.Raygen},
		{Kind: driver.OptiXMiss, Module: m.mod, Entry: p.spec.Miss},
		{Kind: driver.OptiXHitgroup, Module: m.mod, Entry: p.spec.ClosestHit, AnyHit: p.spec.AnyHit},
	}
	groups, _, err := ox.CreateProgramGroups(descs)
	if err != nil {
		return err
	}
	p.groups = groups
	const maxTraceDepth = 1
	if p.pipe, _, err = ox.CreatePipeline(m.opts.compile(), maxTraceDepth, groups); err != nil {
		return err
	}
	sizes := make([]driver.OptiXStackSizes, len(groups))
	for i, g := range groups {
		if sizes[i], err = g.StackSizes(p.pipe); err != nil {
			return err
		}
	}
	p.stack = driver.ContinuationStackSize(driver.MaxStackSizes(sizes...), maxTraceDepth)
	if err := p.pipe.SetStackSize(0, 0, p.stack, m.opts.graphDepth()); err != nil {
		return err
	}
	return p.buildSBT()
}

// buildSBT packs one header-only record per group (raygen, miss, hit group)
// into device memory: records at 0, 32 and 64 bytes (16-byte aligned).
func (p *OptiXPipeline) buildSBT() error {
	const rec = driver.OptiXSBTRecordHeaderSize
	host := make([]byte, rec*len(p.groups))
	for i, g := range p.groups {
		h, err := g.PackHeader()
		if err != nil {
			return err
		}
		copy(host[i*rec:], h[:])
	}
	mem, err := driver.MemAlloc(p.ctx.ordinal, uint64(len(host)))
	if err != nil {
		return err
	}
	p.sbtMem = mem
	if err := driver.CopyHtoD(p.ctx.ordinal, mem, host); err != nil {
		return err
	}
	p.sbt = driver.OptiXShaderBindingTable{
		RaygenRecord:   mem,
		MissRecordBase: mem + rec, MissRecordStrideInBytes: rec, MissRecordCount: 1,
		HitgroupRecordBase: mem + 2*rec, HitgroupRecordStrideInBytes: rec, HitgroupRecordCount: 1,
	}
	return nil
}

// destroy frees what build created (the caller binds the context).
func (p *OptiXPipeline) destroy() error {
	var errs []error
	if p.pipe != (driver.OptiXPipeline{}) {
		errs = append(errs, p.pipe.Destroy())
	}
	for _, g := range p.groups {
		errs = append(errs, g.Destroy())
	}
	if p.sbtMem != 0 {
		errs = append(errs, driver.MemFree(p.ctx.ordinal, p.sbtMem))
	}
	p.pipe, p.groups, p.sbtMem = driver.OptiXPipeline{}, nil, 0
	return errors.Join(errs...)
}

// BuildTime is how long linking the pipeline took (its module's compile
// time is ModuleTime).
func (p *OptiXPipeline) BuildTime() time.Duration { return p.took }

// ModuleTime is how long compiling the pipeline's module took.
func (p *OptiXPipeline) ModuleTime() time.Duration {
	p.ctx.buildMu.Lock()
	defer p.ctx.buildMu.Unlock()
	if m, ok := p.ctx.modules[p.spec.Module]; ok {
		return m.took
	}
	return 0
}

// StackBytes is the continuation stack size set on the pipeline.
func (p *OptiXPipeline) StackBytes() int { return int(p.stack) }

// MaxLaunchWidth is OptiX's limit on a launch's width×height×depth (2^30).
const MaxLaunchWidth = 1 << 30

// Launch runs width raygen invocations (launch index x = row) on s with
// params as the launch-parameter block: params is staged in stream-ordered
// device memory, so it may be reused when Launch returns. Every device
// buffer params refers to must stay valid until s has run the launch.
func (p *OptiXPipeline) Launch(s *Stream, params []byte, width int) error {
	if s.closed.Load() || p.ctx.closed.Load() {
		return ErrClosed
	}
	if s.d.ordinal != p.ctx.ordinal {
		return fmt.Errorf("launch: OptiX pipeline on cuda:%d, stream on %v: %w", p.ctx.ordinal, s.d, ErrWrongDevice)
	}
	if width < 0 || width > MaxLaunchWidth {
		return fmt.Errorf("launch: OptiX launch width %d outside [0, %d]", width, MaxLaunchWidth)
	}
	if width == 0 {
		return nil
	}
	buf, err := AllocAsync[uint8](s, max(len(params), 1))
	if err != nil {
		return err
	}
	err = buf.Upload(s, params)
	if err == nil {
		err = s.use(func() error {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.pipe.Launch(s.s, buf.ptr, uint64(len(params)), &p.sbt, uint32(width), 1, 1)
		})
	}
	if cerr := buf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("launch: OptiX %s on %v: %w", p.spec.Raygen, s.d, err)
	}
	return nil
}
