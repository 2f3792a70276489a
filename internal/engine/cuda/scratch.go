package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
)

// scratch returns an n-element view of the named grow-only buffer of m.
func scratch[T launch.Elem](d *launch.Device, m map[string]*launch.Buffer[T], name string, n int) (*launch.Buffer[T], error) {
	b := m[name]
	if b == nil || b.Len() < n {
		if b != nil {
			if err := b.Close(); err != nil {
				return nil, err
			}
			delete(m, name)
		}
		nb, err := launch.Alloc[T](d, max(n, 1))
		if err != nil {
			return nil, err
		}
		b, m[name] = nb, nb
	}
	return b.View(0, n)
}

// stage uploads src into the named scratch buffer of the slot.
func stage[T launch.Elem](e *Engine, sl *slot, m map[string]*launch.Buffer[T], name string, src []T) (*launch.Buffer[T], error) {
	b, err := scratch(e.dev, m, name, len(src))
	if err != nil {
		return nil, err
	}
	if len(src) > 0 {
		err = b.Upload(sl.s, src)
	}
	return b, err
}

// stageOpt is stage for an optional input: nil stays nil.
func stageOpt[T launch.Elem](e *Engine, sl *slot, m map[string]*launch.Buffer[T], name string, src []T) (*launch.Buffer[T], error) {
	if src == nil {
		return nil, nil
	}
	return stage(e, sl, m, name, src)
}

// scratchSet hands out named scratch views of a slot and keeps the first
// error (later takes return nil).
type scratchSet struct {
	e   *Engine
	sl  *slot
	err error
}

func take[T launch.Elem](a *scratchSet, m map[string]*launch.Buffer[T], name string, n int) *launch.Buffer[T] {
	if a.err != nil {
		return nil
	}
	b, err := scratch(a.e.dev, m, name, n)
	a.err = err
	return b
}

// steps runs the steps in order and stops at the first failure.
func steps(fs ...func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// uploadRays stages a host batch in the slot's scratch buffers.
func (e *Engine) uploadRays(sl *slot, o, d, tmax []float32, active []bool) (accel.Rays, error) {
	r := accel.Rays{N: len(o) / 3, Counter: sl.counter}
	var err error
	if r.O, err = stage(e, sl, sl.f32, "o", o); err != nil {
		return r, err
	}
	if r.D, err = stage(e, sl, sl.f32, "d", d); err != nil {
		return r, err
	}
	if len(tmax) > 0 {
		if r.TMax, err = stage(e, sl, sl.f32, "tmax", tmax); err != nil {
			return r, err
		}
	}
	if len(active) > 0 {
		if r.Active, err = stage(e, sl, sl.u8, "active", BoolsToBytes(active)); err != nil {
			return r, err
		}
	}
	return r, nil
}

// withRays takes a free slot, stages a host batch on it and runs fn.
func (e *Engine) withRays(ctx context.Context, o, d, tmax []float32, active []bool, fn func(sl *slot, dr accel.Rays) error) error {
	return e.onSlot(ctx, func(sl *slot) error {
		dr, err := e.uploadRays(sl, o, d, tmax, active)
		if err != nil {
			return err
		}
		return fn(sl, dr)
	})
}

// free is the device's free memory, the limit of a scratch allocation sized
// by caller input (when it cannot be read, the allocation itself will say).
func (e *Engine) free() int64 {
	f, _, err := e.dev.MemInfo()
	if err != nil || f > 1<<62 {
		return 1 << 62
	}
	return int64(f)
}

// BoolsToBytes converts a mask to bytes (1 = true).
func BoolsToBytes(b []bool) []uint8 {
	out := make([]uint8, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}

// bytesToBools converts bytes to a mask (non-zero = true).
func bytesToBools(b []uint8) []bool {
	out := make([]bool, len(b))
	for i, v := range b {
		out[i] = v != 0
	}
	return out
}
