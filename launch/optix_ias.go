package launch

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/driver"
)

// IAS is an OptiX instance acceleration structure on one device: one level
// of instances (driver.OptiXInstance records), each placing a GAS of the
// same context. It keeps its records, output and build scratch for its
// whole life, so Rebuild over new records of the same count allocates
// nothing and needs no synchronisation. Queries on different streams may
// share it; Rebuild and Close must not overlap queries.
type IAS struct {
	ctx    *OptiXContext
	d      *Device
	n      int
	recs   *Buffer[uint8] // n × driver.OptiXInstanceBytes
	temp   *Buffer[uint8]
	out    *Buffer[uint8]
	opts   driver.OptiXAccelOptions
	handle driver.OptiXTraversable
}

// IASInstance is one instance of an IAS: the GAS it places (of the IAS's
// context, alive as long as the IAS), its object-to-world transform (3×4,
// row major), the id programs read (optixGetInstanceId) and its
// visibility mask (a ray whose mask shares no bit with it skips the
// instance).
type IASInstance struct {
	GAS       *GAS
	Transform [12]float32
	ID        uint32
	Mask      uint8
}

// packInstances packs in as OptixInstance records (SBT offset 0, no
// flags), checking that every GAS is open and belongs to c.
func packInstances(c *OptiXContext, in []IASInstance) ([]byte, error) {
	if len(in) == 0 || len(in) > 1<<28 {
		return nil, fmt.Errorf("launch: IAS of %d instances (need 1 to 2^28)", len(in))
	}
	b := make([]byte, driver.OptiXInstanceBytes*len(in))
	for i, x := range in {
		if x.GAS == nil || x.GAS.handle == 0 || x.GAS.ctx != c {
			return nil, fmt.Errorf("launch: IAS instance %d: its GAS is nil, closed or of another OptiX context", i)
		}
		r := driver.OptiXInstance{Transform: x.Transform, ID: x.ID, VisibilityMask: uint32(x.Mask), Traversable: x.GAS.handle}
		rec := r.Bytes()
		copy(b[driver.OptiXInstanceBytes*i:], rec[:])
	}
	return b, nil
}

// BuildIAS builds the IAS of in on s and returns after the build has
// completed.
func (c *OptiXContext) BuildIAS(s *Stream, in []IASInstance) (*IAS, error) {
	if s.d.ordinal != c.ordinal {
		return nil, fmt.Errorf("launch: BuildIAS: context on cuda:%d, stream on %v: %w", c.ordinal, s.d, ErrWrongDevice)
	}
	records, err := packInstances(c, in)
	if err != nil {
		return nil, err
	}
	n := len(in)
	a := &IAS{ctx: c, d: s.d, n: n, opts: driver.OptiXAccelOptions{BuildFlags: driver.OptiXBuildPreferFastTrace}}
	if err := a.build(s, records); err != nil {
		_ = a.Close()
		return nil, fmt.Errorf("launch: BuildIAS (%d instances) on %v: %w", n, s.d, err)
	}
	return a, nil
}

func (a *IAS) input() driver.OptiXInstances {
	return driver.OptiXInstances{Instances: a.recs.ptr, NumInstances: uint32(a.n)}
}

// build allocates the records (cuMemAlloc: 256-byte aligned), output and
// scratch buffers and runs the first build.
func (a *IAS) build(s *Stream, records []byte) error {
	var err error
	if a.recs, err = Alloc[uint8](a.d, len(records)); err != nil {
		return err
	}
	var sizes driver.OptiXAccelBufferSizes
	err = s.use(func() error {
		var e error
		sizes, e = a.ctx.ox.AccelMemoryUsageInstances(a.opts, a.input())
		return e
	})
	if err != nil {
		return err
	}
	if a.temp, err = Alloc[uint8](a.d, int(max(sizes.TempBytes, 8))); err != nil {
		return err
	}
	if a.out, err = Alloc[uint8](a.d, int(max(sizes.OutputBytes, 8))); err != nil {
		return err
	}
	if err := a.rebuild(s, records); err != nil {
		return err
	}
	return s.Synchronize()
}

// Rebuild uploads in (as many instances as at build) and queues a full
// build of the IAS over them on s; the GASes they place are not touched.
// Queries queued on s afterwards see the new instances; other streams must
// wait for s.
func (a *IAS) Rebuild(s *Stream, in []IASInstance) error {
	if a.out == nil || a.out.closed.Load() {
		return ErrClosed
	}
	if s.d != a.d {
		return fmt.Errorf("launch: IAS.Rebuild: IAS on %v, stream on %v: %w", a.d, s.d, ErrWrongDevice)
	}
	if len(in) != a.n {
		return fmt.Errorf("launch: IAS.Rebuild: %d instances, the IAS holds %d", len(in), a.n)
	}
	records, err := packInstances(a.ctx, in)
	if err != nil {
		return err
	}
	return a.rebuild(s, records)
}

// rebuild uploads packed records and queues the build.
func (a *IAS) rebuild(s *Stream, records []byte) error {
	if err := a.recs.Upload(s, records); err != nil {
		return err
	}
	return s.use(func() error {
		h, err := a.ctx.ox.AccelBuildInstances(s.s, a.opts, a.input(), a.temp.ptr, uint64(a.temp.Bytes()),
			a.out.ptr, uint64(a.out.Bytes()))
		if err == nil {
			a.handle = h
		}
		return err
	})
}

// Handle returns the traversable handle for the launch parameters.
func (a *IAS) Handle() uint64 { return uint64(a.handle) }

// NumInstances is the number of instances.
func (a *IAS) NumInstances() int { return a.n }

// Bytes returns the device memory the IAS holds (records, structure and
// build scratch).
func (a *IAS) Bytes() int {
	n := 0
	for _, b := range []*Buffer[uint8]{a.recs, a.temp, a.out} {
		if b != nil {
			n += b.Bytes()
		}
	}
	return n
}

// Close frees the IAS's memory (not the GASes it places). Idempotent; no
// queued work may still use the IAS.
func (a *IAS) Close() error {
	var errs []error
	for _, b := range []*Buffer[uint8]{a.recs, a.temp, a.out} {
		errs = append(errs, b.Close())
	}
	a.recs, a.temp, a.out, a.handle = nil, nil, nil, 0
	return errors.Join(errs...)
}
