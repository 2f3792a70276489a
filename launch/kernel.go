package launch

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/ptx"
)

// Kernel is one entry point of a loaded module on one device. Launch is safe
// for concurrent use.
type Kernel struct {
	d     *Device
	name  string // module.entry
	entry ptx.Entry
	fn    driver.Function

	mu   sync.Mutex
	args *driver.Args

	occMu sync.Mutex
	occ   map[occupancyKey]int // ResidentBlocksPerSM's answers
}

// occupancyKey is one ResidentBlocksPerSM question: threads per block and
// dynamic shared bytes per block.
type occupancyKey struct {
	threads uint32
	shared  uint32
}

// Null is a null device pointer, accepted by pointer parameters that a kernel
// documents as optional.
var Null = nullPtr{}

type nullPtr struct{}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Blocks returns a 1-D grid of ceil(n/block) blocks (at least 1).
func Blocks(n, block int) Dim3 {
	g := (n + block - 1) / block
	if g < 1 {
		g = 1
	}
	return Dim3{X: uint32(g), Y: 1, Z: 1}
}

// Threads returns a 1-D block of n threads.
func Threads(n int) Dim3 { return Dim3{X: uint32(n), Y: 1, Z: 1} }

func (g Dim3) arr() [3]uint32 {
	a := [3]uint32{g.X, g.Y, g.Z}
	for i := range a {
		if a[i] == 0 {
			a[i] = 1
		}
	}
	return a
}

// Kernel returns the entry point entry of module module on d, loading the
// module on first use (from its cubin or its PTX: see LoadModule). The
// result is cached per device.
func (d *Device) Kernel(module, entry string) (*Kernel, error) {
	m, err := d.module(module)
	if err != nil {
		return nil, err
	}
	key := module + "." + entry
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.kernels == nil {
		return nil, ErrClosed
	}
	if k, ok := d.kernels[key]; ok {
		return k, nil
	}
	e, ok := m.rec.Entry(entry)
	if !ok {
		return nil, fmt.Errorf("launch: module %s has no entry %q", module, entry)
	}
	if len(e.Params) > driver.MaxKernelParams {
		return nil, fmt.Errorf("launch: %s has %d parameters (max %d)", key, len(e.Params), driver.MaxKernelParams)
	}
	k := &Kernel{d: d, name: key, entry: e, args: driver.NewArgs()}
	err = d.with(func() error {
		var e error
		k.fn, e = m.mod.Function(entry)
		return e
	})
	if err != nil {
		k.args.Free()
		return nil, err
	}
	d.kernels[key] = k
	return k, nil
}

// Name returns "module.entry".
func (k *Kernel) Name() string { return k.name }

// Params returns the entry point's parameter layout.
func (k *Kernel) Params() []ptx.Param { return k.entry.Params }

// ResidentBlocksPerSM returns how many blocks of block's threads, each
// with sharedBytes of dynamic shared memory, one multiprocessor of the
// kernel's device holds at once; a grid of that many blocks per
// multiprocessor runs in one wave. The driver is asked once per block size
// and shared size; later calls answer from the kernel's cache and make no
// driver call.
func (k *Kernel) ResidentBlocksPerSM(block Dim3, sharedBytes uint32) (int, error) {
	if k.d.closed.Load() {
		return 0, ErrClosed
	}
	a := block.arr()
	key := occupancyKey{threads: a[0] * a[1] * a[2], shared: sharedBytes}
	k.occMu.Lock()
	defer k.occMu.Unlock()
	if n, ok := k.occ[key]; ok {
		return n, nil
	}
	n := 0
	err := k.d.with(func() error {
		var e error
		n, e = k.fn.ResidentBlocksPerSM(int(key.threads), sharedBytes)
		return e
	})
	if err != nil {
		return 0, err
	}
	if k.occ == nil {
		k.occ = map[occupancyKey]int{}
	}
	k.occ[key] = n
	return n, nil
}

// Launch validates args against the parameter layout, packs them and enqueues
// the kernel on s. Arguments: a *Buffer[T] or Null for pointer parameters;
// int32/uint32 for 32-bit integers (int is accepted when it fits); float32
// for f32; uint64/int64 for 64-bit integers; float64 for f64.
func (k *Kernel) Launch(s *Stream, grid, block Dim3, sharedBytes uint32, args ...any) error {
	if s.d != k.d {
		return fmt.Errorf("launch: %s: %w: stream on %v, kernel on %v", k.name, ErrWrongDevice, s.d, k.d)
	}
	if s.closed.Load() || k.d.closed.Load() {
		return ErrClosed
	}
	if len(args) != len(k.entry.Params) {
		return &ArgError{Kernel: k.name, Index: -1, Want: fmt.Sprint(len(k.entry.Params)), Got: fmt.Sprint(len(args))}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.args.Reset()
	for i, a := range args {
		if err := k.pack(i, a); err != nil {
			return err
		}
	}
	// The hot path binds the context inline (no closure, no hand-off).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := k.d.ctx.SetCurrent(); err != nil {
		return err
	}
	return k.fn.Launch(grid.arr(), block.arr(), sharedBytes, s.s, k.args)
}

// pack appends argument i after checking it against parameter i.
func (k *Kernel) pack(i int, a any) error {
	p := k.entry.Params[i]
	bad := func(got string) error {
		want := p.Type
		if p.Pointer {
			want = "device pointer (*launch.Buffer or launch.Null)"
		}
		return &ArgError{Kernel: k.name, Index: i, Param: p.Name, Want: want, Got: got}
	}
	if p.Pointer || (p.Type == "u64" && isPointerArg(a)) {
		if !p.Pointer {
			return bad(fmt.Sprintf("%T", a))
		}
		switch v := a.(type) {
		case nullPtr:
			k.args.PutU64(0)
			return nil
		case devicePointer:
			ptr, dev, closed := v.kernelPtr()
			if closed {
				return fmt.Errorf("launch: %s argument %d (%s): %w", k.name, i, p.Name, ErrClosed)
			}
			if dev != k.d && !k.d.reaches(dev) {
				return fmt.Errorf("launch: %s argument %d (%s): %w: buffer on %v, kernel on %v", k.name, i, p.Name, ErrWrongDevice, dev, k.d)
			}
			k.args.PutU64(uint64(ptr))
			return nil
		}
		return bad(fmt.Sprintf("%T", a))
	}
	switch p.Type {
	case "u32", "s32", "b32":
		switch v := a.(type) {
		case int32:
			k.args.PutU32(uint32(v))
		case uint32:
			k.args.PutU32(v)
		case int:
			if v < math.MinInt32 || v > math.MaxUint32 {
				return bad(fmt.Sprintf("int %d (out of 32-bit range)", v))
			}
			k.args.PutU32(uint32(v))
		default:
			return bad(fmt.Sprintf("%T", a))
		}
	case "f32":
		v, ok := a.(float32)
		if !ok {
			return bad(fmt.Sprintf("%T", a))
		}
		k.args.PutU32(math.Float32bits(v))
	case "u64", "s64", "b64":
		switch v := a.(type) {
		case uint64:
			k.args.PutU64(v)
		case int64:
			k.args.PutU64(uint64(v))
		default:
			return bad(fmt.Sprintf("%T", a))
		}
	case "f64":
		v, ok := a.(float64)
		if !ok {
			return bad(fmt.Sprintf("%T", a))
		}
		k.args.PutU64(math.Float64bits(v))
	default:
		return bad(fmt.Sprintf("%T (parameter type %s is not supported by Launch)", a, p.Type))
	}
	return nil
}

func isPointerArg(a any) bool {
	switch a.(type) {
	case nullPtr, devicePointer:
		return true
	}
	return false
}
