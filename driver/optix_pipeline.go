package driver

import (
	"fmt"
	"runtime"
	"unsafe"
)

// OptiXModule is an OptixModule (programs compiled from PTX).
type OptiXModule struct {
	h   uintptr
	dev int
}

// OptiXProgramGroup is an OptixProgramGroup.
type OptiXProgramGroup struct {
	h   uintptr
	dev int
}

// OptiXPipeline is an OptixPipeline.
type OptiXPipeline struct {
	h   uintptr
	dev int
}

// OptiXCompileOptions are the module and pipeline compile options. OptiX
// requires every module of a pipeline and the pipeline itself to use the
// same values, so one OptiXCompileOptions describes a module and every
// pipeline built from it.
type OptiXCompileOptions struct {
	PayloadValues    int    // payload words of the largest trace call, 0..32
	AttributeValues  int    // attribute words, 2..8 (built-in triangles use 2)
	ParamsName       string // the __constant__ launch-parameter variable ("" = none), < 64 bytes
	TraversableGraph uint32 // OptiXGraph*
	TrianglesOnly    bool   // usesPrimitiveTypeFlags = TRIANGLE (else custom + triangle)
	MaxRegisters     int    // 0 = OptiX's default
}

// compileOpts holds the packed options and the parameter name they point to,
// pinned as one object for a call.
type compileOpts struct {
	mco  optixModuleCompileOptions
	pco  optixPipelineCompileOptions
	name [64]byte
}

func newCompileOpts(o OptiXCompileOptions) (*compileOpts, func(), error) {
	if o.PayloadValues < 0 || o.PayloadValues > OptiXMaxPayloadValues || o.AttributeValues < 0 || o.AttributeValues > 8 {
		return nil, nil, fmt.Errorf("rayd/driver: OptiX compile options: %d payload and %d attribute values", o.PayloadValues, o.AttributeValues)
	}
	if len(o.ParamsName) >= 64 {
		return nil, nil, fmt.Errorf("rayd/driver: OptiX compile options: parameter name %q too long", o.ParamsName)
	}
	c := new(compileOpts)
	var pin runtime.Pinner
	pin.Pin(c)
	c.mco = optixModuleCompileOptions{maxRegisterCount: int32(o.MaxRegisters), debugLevel: optixCompileDebugNone}
	c.pco = optixPipelineCompileOptions{
		traversableGraphFlags: o.TraversableGraph,
		numPayloadValues:      int32(o.PayloadValues),
		numAttributeValues:    int32(max(o.AttributeValues, 2)),
	}
	if o.ParamsName != "" {
		copy(c.name[:], o.ParamsName)
		c.pco.pipelineLaunchParamsVariableName = uintptr(unsafe.Pointer(&c.name[0]))
	}
	if o.TrianglesOnly {
		c.pco.usesPrimitiveTypeFlags = optixPrimitiveTriangle
	}
	return c, pin.Unpin, nil
}

// optixCallLog is the per-call log buffer of the compiling entry points.
type optixCallLog struct {
	buf  [8192]byte
	size uintptr
}

func newCallLog() *optixCallLog {
	l := new(optixCallLog)
	l.size = uintptr(len(l.buf))
	return l
}

func (l *optixCallLog) String() string {
	b := l.buf[:min(int(l.size), len(l.buf))]
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// CreateModule compiles PTX text into a module (optixModuleCreate). The
// returned log is OptiX's compiler feedback for this call (also on failure,
// inside the *OptiXError).
func (c OptiXContext) CreateModule(opt OptiXCompileOptions, ptx []byte) (OptiXModule, string, error) {
	if len(ptx) == 0 {
		return OptiXModule{}, "", fmt.Errorf("rayd/driver: optixModuleCreate: empty PTX")
	}
	co, unpin, err := newCompileOpts(opt)
	if err != nil {
		return OptiXModule{}, "", err
	}
	defer unpin()
	lg := newCallLog()
	var h uintptr
	r := invoke("optixModuleCreate", ox.optixModuleCreate, c.h, uintptr(unsafe.Pointer(&co.mco)), uintptr(unsafe.Pointer(&co.pco)),
		uintptr(unsafe.Pointer(&ptx[0])), uintptr(len(ptx)), uintptr(unsafe.Pointer(&lg.buf[0])), uintptr(unsafe.Pointer(&lg.size)),
		uintptr(unsafe.Pointer(&h)))
	runtime.KeepAlive(ptx)
	text := lg.String()
	if err := optixCheckLog("optixModuleCreate", c.dev, r, text); err != nil {
		return OptiXModule{}, text, err
	}
	return OptiXModule{h: h, dev: c.dev}, text, nil
}

// Destroy destroys the module (after every program group using it).
func (m OptiXModule) Destroy() error {
	return optixCheck("optixModuleDestroy", m.dev, invoke("optixModuleDestroy", ox.optixModuleDestroy, m.h))
}

// OptiXProgramKind is the kind of a program group.
type OptiXProgramKind int32

// Program group kinds.
const (
	OptiXRaygen   OptiXProgramKind = optixProgramKindRaygen
	OptiXMiss     OptiXProgramKind = optixProgramKindMiss
	OptiXHitgroup OptiXProgramKind = optixProgramKindHitgroup
)

// OptiXProgramDesc describes one program group: a raygen or miss program
// (Entry), or a hit group of a closest-hit (Entry) and an optional any-hit
// program (AnyHit) over built-in triangles. Entry names carry their
// __raygen__/__miss__/__closesthit__/__anyhit__ prefix; "" leaves a stage out.
type OptiXProgramDesc struct {
	Kind   OptiXProgramKind
	Module OptiXModule
	Entry  string
	AnyHit string
}

// CreateProgramGroups creates one program group per description
// (optixProgramGroupCreate).
func (c OptiXContext) CreateProgramGroups(descs []OptiXProgramDesc) ([]OptiXProgramGroup, string, error) {
	if len(descs) == 0 {
		return nil, "", nil
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	name := func(s string) uintptr {
		if s == "" {
			return 0
		}
		b := cString(s)
		pin.Pin(&b[0])
		return uintptr(unsafe.Pointer(&b[0]))
	}
	packed := make([]optixProgramGroupDesc, len(descs))
	for i, d := range descs {
		p := &packed[i]
		p.kind = int32(d.Kind)
		if d.Entry != "" {
			p.module1, p.entry1 = d.Module.h, name(d.Entry)
		}
		if d.Kind == OptiXHitgroup && d.AnyHit != "" {
			p.module2, p.entry2 = d.Module.h, name(d.AnyHit)
		}
	}
	pin.Pin(&packed[0])
	opts := new(optixProgramGroupOptions)
	lg := newCallLog()
	out := make([]uintptr, len(descs))
	r := invoke("optixProgramGroupCreate", ox.optixProgramGroupCreate, c.h, uintptr(unsafe.Pointer(&packed[0])),
		uintptr(len(packed)), uintptr(unsafe.Pointer(opts)), uintptr(unsafe.Pointer(&lg.buf[0])), uintptr(unsafe.Pointer(&lg.size)),
		uintptr(unsafe.Pointer(&out[0])))
	text := lg.String()
	if err := optixCheckLog("optixProgramGroupCreate", c.dev, r, text); err != nil {
		return nil, text, err
	}
	groups := make([]OptiXProgramGroup, len(out))
	for i, h := range out {
		groups[i] = OptiXProgramGroup{h: h, dev: c.dev}
	}
	return groups, text, nil
}

// Destroy destroys the program group (after every pipeline using it).
func (g OptiXProgramGroup) Destroy() error {
	return optixCheck("optixProgramGroupDestroy", g.dev, invoke("optixProgramGroupDestroy", ox.optixProgramGroupDestroy, g.h))
}

// StackSizes returns the group's stack sizes as used in pipeline p
// (optixProgramGroupGetStackSize; p may be the zero OptiXPipeline).
func (g OptiXProgramGroup) StackSizes(p OptiXPipeline) (OptiXStackSizes, error) {
	var s OptiXStackSizes
	r := invoke("optixProgramGroupGetStackSize", ox.optixProgramGroupGetStackSize, g.h, uintptr(unsafe.Pointer(&s)), p.h)
	return s, optixCheck("optixProgramGroupGetStackSize", g.dev, r)
}

// PackHeader returns the group's 32-byte SBT record header
// (optixSbtRecordPackHeader), to be placed at the start of its record.
func (g OptiXProgramGroup) PackHeader() ([OptiXSBTRecordHeaderSize]byte, error) {
	hdr := new([OptiXSBTRecordHeaderSize]byte)
	r := invoke("optixSbtRecordPackHeader", ox.optixSbtRecordPackHeader, g.h, uintptr(unsafe.Pointer(&hdr[0])))
	return *hdr, optixCheck("optixSbtRecordPackHeader", g.dev, r)
}

// CreatePipeline links program groups into a pipeline (optixPipelineCreate)
// with the compile options of their module and maxTraceDepth as the link
// option.
func (c OptiXContext) CreatePipeline(opt OptiXCompileOptions, maxTraceDepth int, groups []OptiXProgramGroup) (OptiXPipeline, string, error) {
	if len(groups) == 0 {
		return OptiXPipeline{}, "", fmt.Errorf("rayd/driver: optixPipelineCreate: no program groups")
	}
	co, unpin, err := newCompileOpts(opt)
	if err != nil {
		return OptiXPipeline{}, "", err
	}
	defer unpin()
	link := &optixPipelineLinkOptions{maxTraceDepth: uint32(maxTraceDepth)}
	hs := make([]uintptr, len(groups))
	for i, g := range groups {
		hs[i] = g.h
	}
	lg := newCallLog()
	var h uintptr
	r := invoke("optixPipelineCreate", ox.optixPipelineCreate, c.h, uintptr(unsafe.Pointer(&co.pco)), uintptr(unsafe.Pointer(link)),
		uintptr(unsafe.Pointer(&hs[0])), uintptr(len(hs)), uintptr(unsafe.Pointer(&lg.buf[0])), uintptr(unsafe.Pointer(&lg.size)),
		uintptr(unsafe.Pointer(&h)))
	text := lg.String()
	if err := optixCheckLog("optixPipelineCreate", c.dev, r, text); err != nil {
		return OptiXPipeline{}, text, err
	}
	return OptiXPipeline{h: h, dev: c.dev}, text, nil
}

// SetStackSize sets the pipeline's stack sizes (optixPipelineSetStackSize);
// maxGraphDepth is 1 for a single GAS, 2 for one instance level.
func (p OptiXPipeline) SetStackSize(dcFromTraversal, dcFromState, continuation, maxGraphDepth uint32) error {
	r := invoke("optixPipelineSetStackSize", ox.optixPipelineSetStackSize, p.h, uintptr(dcFromTraversal),
		uintptr(dcFromState), uintptr(continuation), uintptr(maxGraphDepth))
	return optixCheck("optixPipelineSetStackSize", p.dev, r)
}

// Destroy destroys the pipeline (no launch of it may be pending on the host).
func (p OptiXPipeline) Destroy() error {
	return optixCheck("optixPipelineDestroy", p.dev, invoke("optixPipelineDestroy", ox.optixPipelineDestroy, p.h))
}

// Launch queues a launch of width×height×depth raygen invocations on s
// (optixLaunch). paramsBytes bytes are copied from params (device memory)
// before the launch; sbt is read during the call. Device buffers must stay
// valid until s has run the launch. OptiX does not support concurrent calls
// for one pipeline: callers serialise Launch per pipeline.
func (p OptiXPipeline) Launch(s Stream, params DevicePtr, paramsBytes uint64, sbt *OptiXShaderBindingTable, width, height, depth uint32) error {
	r := invoke("optixLaunch", ox.optixLaunch, p.h, s.h, uintptr(params), uintptr(paramsBytes), uintptr(unsafe.Pointer(sbt)),
		uintptr(width), uintptr(height), uintptr(depth))
	runtime.KeepAlive(sbt)
	return optixCheck("optixLaunch", p.dev, r)
}

// ContinuationStackSize is optixUtilComputeStackSizes for programs without
// callables: cssRG + (max(depth,1)−1)·max(cssCH, cssMS) + min(depth,1)·
// max(max(cssCH, cssMS), cssIS + cssAH), over the per-field maxima s.
func ContinuationStackSize(s OptiXStackSizes, maxTraceDepth uint32) uint32 {
	chms := max(s.CSSCH, s.CSSMS)
	return s.CSSRG + (max(maxTraceDepth, 1)-1)*chms + min(maxTraceDepth, 1)*max(chms, s.CSSIS+s.CSSAH)
}

// MaxStackSizes is the per-field maximum of several groups' stack sizes.
func MaxStackSizes(all ...OptiXStackSizes) OptiXStackSizes {
	var m OptiXStackSizes
	for _, s := range all {
		m.CSSRG, m.CSSMS, m.CSSCH = max(m.CSSRG, s.CSSRG), max(m.CSSMS, s.CSSMS), max(m.CSSCH, s.CSSCH)
		m.CSSAH, m.CSSIS, m.CSSCC, m.DSSDC = max(m.CSSAH, s.CSSAH), max(m.CSSIS, s.CSSIS), max(m.CSSCC, s.CSSCC), max(m.DSSDC, s.DSSDC)
	}
	return m
}
