package driver

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Module is a loaded CUDA module (cuModuleLoadDataEx).
type Module struct {
	h   uintptr
	dev int
}

// Function is a kernel handle looked up in a Module.
type Function struct {
	h   uintptr
	dev int
}

// ModuleLoadError is a JIT failure with the driver's error log.
type ModuleLoadError struct {
	Err error  // the *CallError of cuModuleLoadDataEx
	Log string // the JIT error log
}

func (e *ModuleLoadError) Error() string {
	if e.Log == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v\nJIT log:\n%s", e.Err, e.Log)
}

func (e *ModuleLoadError) Unwrap() error { return e.Err }

// LoadModule JIT-loads a PTX (or cubin) image into the current context. The
// image need not be NUL-terminated: a terminated copy is passed to the driver.
func LoadModule(dev int, image []byte) (Module, error) {
	img := make([]byte, len(image)+1)
	copy(img, image)
	logBuf := make([]byte, 16<<10)
	const (
		optErrorLogBuffer     = 5
		optErrorLogBufferSize = 6
	)
	opts := []uint32{optErrorLogBuffer, optErrorLogBufferSize}
	var pin runtime.Pinner
	pin.Pin(&logBuf[0])
	defer pin.Unpin()
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	var h uintptr
	r := invoke("cuModuleLoadDataEx", cuda.cuModuleLoadDataEx, uintptr(unsafe.Pointer(&h)),
		uintptr(unsafe.Pointer(&img[0])), uintptr(len(opts)),
		uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	runtime.KeepAlive(logBuf)
	if err := check("cuModuleLoadDataEx", dev, r); err != nil {
		return Module{}, &ModuleLoadError{Err: err, Log: goString(&logBuf[0])}
	}
	return Module{h: h, dev: dev}, nil
}

// Function looks up a kernel by its entry name.
func (m Module) Function(name string) (Function, error) {
	var f uintptr
	cname := cString(name)
	r := invoke("cuModuleGetFunction", cuda.cuModuleGetFunction, uintptr(unsafe.Pointer(&f)), m.h, uintptr(unsafe.Pointer(&cname[0])))
	if err := check("cuModuleGetFunction", m.dev, r); err != nil {
		return Function{}, fmt.Errorf("kernel %q: %w", name, err)
	}
	return Function{h: f, dev: m.dev}, nil
}

// Global returns the address and size of a module-scope __device__ or
// __constant__ variable.
func (m Module) Global(name string) (DevicePtr, uint64, error) {
	var p DevicePtr
	var n uint64
	cname := cString(name)
	r := invoke("cuModuleGetGlobal_v2", cuda.cuModuleGetGlobal_v2, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&n)), m.h, uintptr(unsafe.Pointer(&cname[0])))
	return p, n, check("cuModuleGetGlobal_v2", m.dev, r)
}

// Unload unloads the module; its functions become invalid.
func (m Module) Unload() error {
	return check("cuModuleUnload", m.dev, invoke("cuModuleUnload", cuda.cuModuleUnload, m.h))
}

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute int32

// Function attributes.
const (
	FuncMaxThreadsPerBlock FuncAttribute = 0
	FuncSharedSizeBytes    FuncAttribute = 1
	FuncNumRegs            FuncAttribute = 4
	FuncLocalSizeBytes     FuncAttribute = 3
)

// Attribute returns a function attribute (registers, local memory, ...).
func (f Function) Attribute(a FuncAttribute) (int, error) {
	var v int32
	r := invoke("cuFuncGetAttribute", cuda.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), f.h)
	return int(v), check("cuFuncGetAttribute", f.dev, r)
}

// ResidentBlocksPerSM returns how many blocks of blockSize threads, each
// with dynamicShared bytes of dynamic shared memory, one multiprocessor
// holds at once (the driver's occupancy calculation: registers, shared
// memory, warps and block slots).
func (f Function) ResidentBlocksPerSM(blockSize int, dynamicShared uint32) (int, error) {
	var v int32
	r := invoke("cuOccupancyMaxActiveBlocksPerMultiprocessor", cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor,
		uintptr(unsafe.Pointer(&v)), f.h, uintptr(blockSize), uintptr(dynamicShared))
	return int(v), check("cuOccupancyMaxActiveBlocksPerMultiprocessor", f.dev, r)
}

// MaxKernelParams is the largest parameter count Args holds.
const MaxKernelParams = 32

// Args is reusable, pinned storage for one launch's kernel parameters: one
// 8-byte slot per parameter (every scalar and pointer parameter fits) and the
// void* array cuLaunchKernel reads. The driver copies the values during
// cuLaunchKernel, so an Args may be refilled as soon as Launch returns. Not
// safe for concurrent use; create one per launching goroutine or guard it.
type Args struct {
	slots [MaxKernelParams]uint64
	ptrs  [MaxKernelParams]uintptr
	n     int
	pin   runtime.Pinner
}

// NewArgs returns pinned parameter storage; call Free when done.
func NewArgs() *Args {
	a := &Args{}
	a.pin.Pin(a)
	for i := range a.ptrs {
		a.ptrs[i] = uintptr(unsafe.Pointer(&a.slots[i]))
	}
	return a
}

// Free unpins the storage.
func (a *Args) Free() { a.pin.Unpin() }

// Reset empties the parameter list.
func (a *Args) Reset() { a.n = 0 }

// Len returns the number of parameters set.
func (a *Args) Len() int { return a.n }

// PutU64 appends an 8-byte parameter (pointer, u64, s64, f64 bits).
func (a *Args) PutU64(v uint64) { a.slots[a.n] = v; a.n++ }

// PutU32 appends a 4-byte parameter (u32, s32, f32 bits).
func (a *Args) PutU32(v uint32) { a.slots[a.n] = uint64(v); a.n++ }

// Launch enqueues f on s with the parameters in a (cuLaunchKernel).
func (f Function) Launch(grid, block [3]uint32, sharedBytes uint32, s Stream, a *Args) error {
	var params uintptr
	if a != nil && a.n > 0 {
		params = uintptr(unsafe.Pointer(&a.ptrs[0]))
	}
	r := invoke("cuLaunchKernel", cuda.cuLaunchKernel, f.h,
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		uintptr(sharedBytes), s.h, params, 0)
	runtime.KeepAlive(a)
	return check("cuLaunchKernel", f.dev, r)
}

// Slots returns the packed parameter words (for tests and diagnostics).
func (a *Args) Slots() []uint64 { return a.slots[:a.n] }
