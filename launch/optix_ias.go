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

// BuildIAS builds the IAS of records (packed OptixInstance records,
// driver.OptiXInstance.Put, a whole number of driver.OptiXInstanceBytes and
// at least one) on s and returns after the build has completed. Every
// record's traversable must be a GAS of c that outlives the IAS.
func (c *OptiXContext) BuildIAS(s *Stream, records []byte) (*IAS, error) {
	if s.d.ordinal != c.ordinal {
		return nil, fmt.Errorf("launch: BuildIAS: context on cuda:%d, stream on %v: %w", c.ordinal, s.d, ErrWrongDevice)
	}
	n := len(records) / driver.OptiXInstanceBytes
	if n == 0 || len(records)%driver.OptiXInstanceBytes != 0 || n > 1<<28 {
		return nil, fmt.Errorf("launch: BuildIAS: %d record bytes (need whole %d-byte records, 1 to 2^28 of them)",
			len(records), driver.OptiXInstanceBytes)
	}
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
	if err := a.Rebuild(s, records); err != nil {
		return err
	}
	return s.Synchronize()
}

// Rebuild uploads new records (the same count as at build) and queues a
// full build of the IAS over them on s; the GASes they place are not
// touched. Queries queued on s afterwards see the new instances; other
// streams must wait for s.
func (a *IAS) Rebuild(s *Stream, records []byte) error {
	if a.out == nil || a.out.closed.Load() {
		return ErrClosed
	}
	if s.d != a.d {
		return fmt.Errorf("launch: IAS.Rebuild: IAS on %v, stream on %v: %w", a.d, s.d, ErrWrongDevice)
	}
	if len(records) != a.n*driver.OptiXInstanceBytes {
		return fmt.Errorf("launch: IAS.Rebuild: %d record bytes, the IAS holds %d instances of %d bytes",
			len(records), a.n, driver.OptiXInstanceBytes)
	}
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
