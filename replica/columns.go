package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// spec is one column of a row-major record: its name (for validation
// errors) and its width in elements per row; width 0 means the column is
// absent.
type spec struct {
	name string
	per  int
}

// layout lists the columns of an operation's inputs or outputs by element
// type, in a fixed canonical order per operation.
type layout struct {
	f32, i32, u8 []spec
}

// columns holds one buffer per column of a layout (nil where the column is
// absent). The buffers are either owned (allocated by the replica) or views
// of the caller's memory.
type columns struct {
	f32 []*launch.Buffer[float32]
	i32 []*launch.Buffer[int32]
	u8  []*launch.Buffer[uint8]
}

// allocCols allocates n rows of every present column in stream order on s.
func allocCols(s *launch.Stream, l layout, n int) (columns, error) {
	var c columns
	var err error
	c.f32, err = allocSet[float32](s, l.f32, n)
	if err == nil {
		c.i32, err = allocSet[int32](s, l.i32, n)
	}
	if err == nil {
		c.u8, err = allocSet[uint8](s, l.u8, n)
	}
	if err != nil {
		return columns{}, errors.Join(err, c.closeOn(s))
	}
	return c, nil
}

func allocSet[T launch.Elem](s *launch.Stream, l []spec, n int) ([]*launch.Buffer[T], error) {
	out := make([]*launch.Buffer[T], len(l))
	for i, c := range l {
		if c.per == 0 {
			continue
		}
		b, err := launch.AllocAsync[T](s, c.per*n)
		if err != nil {
			return out, fmt.Errorf("replica: allocating %s (%d rows): %w", c.name, n, err)
		}
		out[i] = b
	}
	return out, nil
}

// view returns rows [lo, hi) of every present column.
func (c columns) view(l layout, lo, hi int) (columns, error) {
	var v columns
	var err error
	if v.f32, err = viewSet(c.f32, l.f32, lo, hi); err != nil {
		return v, err
	}
	if v.i32, err = viewSet(c.i32, l.i32, lo, hi); err != nil {
		return v, err
	}
	v.u8, err = viewSet(c.u8, l.u8, lo, hi)
	return v, err
}

func viewSet[T launch.Elem](bufs []*launch.Buffer[T], l []spec, lo, hi int) ([]*launch.Buffer[T], error) {
	out := make([]*launch.Buffer[T], len(l))
	for i, c := range l {
		if c.per == 0 {
			continue
		}
		if i >= len(bufs) || bufs[i] == nil {
			return nil, fmt.Errorf("replica: %s is missing", c.name)
		}
		if lo < 0 || hi < lo || bufs[i].Len() < c.per*hi {
			return nil, fmt.Errorf("replica: rows [%d,%d) of %s exceed its %d elements", lo, hi, c.name, bufs[i].Len())
		}
		v, err := bufs[i].View(c.per*lo, c.per*(hi-lo))
		if err != nil {
			return nil, fmt.Errorf("replica: rows [%d,%d) of %s: %w", lo, hi, c.name, err)
		}
		out[i] = v
	}
	return out, nil
}

// copyFrom queues copies of every column of src into c on s (peer copies
// when the devices differ). c and src have the same layout and rows.
func (c columns) copyFrom(s *launch.Stream, src columns) error {
	if err := copySet(s, c.f32, src.f32); err != nil {
		return err
	}
	if err := copySet(s, c.i32, src.i32); err != nil {
		return err
	}
	return copySet(s, c.u8, src.u8)
}

func copySet[T launch.Elem](s *launch.Stream, dst, src []*launch.Buffer[T]) error {
	for i, b := range dst {
		if b == nil {
			continue
		}
		if i >= len(src) || src[i] == nil {
			return fmt.Errorf("replica: copy: source column %d is missing", i)
		}
		if err := b.CopyFrom(s, src[i]); err != nil {
			return err
		}
	}
	return nil
}

// closeOn frees every owned column in stream order on s.
func (c columns) closeOn(s *launch.Stream) error {
	var errs []error
	for _, b := range c.f32 {
		errs = append(errs, b.CloseOn(s))
	}
	for _, b := range c.i32 {
		errs = append(errs, b.CloseOn(s))
	}
	for _, b := range c.u8 {
		errs = append(errs, b.CloseOn(s))
	}
	return errors.Join(errs...)
}

// bytes is the size of every present column.
func (c columns) bytes() int64 {
	var n int64
	for _, b := range c.f32 {
		if b != nil {
			n += int64(b.Bytes())
		}
	}
	for _, b := range c.i32 {
		if b != nil {
			n += int64(b.Bytes())
		}
	}
	for _, b := range c.u8 {
		if b != nil {
			n += int64(b.Bytes())
		}
	}
	return n
}

// device returns the device of the first present column and checks that
// every other column lives on it (nil when no column is present).
func (c columns) device(l layout) (*launch.Device, error) {
	var d *launch.Device
	var err error
	check := func(name string, b interface{ Device() *launch.Device }) {
		switch {
		case err != nil:
		case d == nil:
			d = b.Device()
		case b.Device() != d:
			err = fmt.Errorf("replica: %s is on %v, the other buffers on %v", name, b.Device(), d)
		}
	}
	for i, b := range c.f32 {
		if b != nil && l.f32[i].per > 0 {
			check(l.f32[i].name, b)
		}
	}
	for i, b := range c.i32 {
		if b != nil && l.i32[i].per > 0 {
			check(l.i32[i].name, b)
		}
	}
	for i, b := range c.u8 {
		if b != nil && l.u8[i].per > 0 {
			check(l.u8[i].name, b)
		}
	}
	return d, err
}

// download copies the first len(dst[i]) elements of every present column
// into dst[i], after the work queued on s (each copy waits for s).
func download[T launch.Elem](s *launch.Stream, bufs []*launch.Buffer[T], dst [][]T) error {
	for i, b := range bufs {
		if b == nil || i >= len(dst) || len(dst[i]) == 0 {
			continue
		}
		if err := b.Download(s, dst[i]); err != nil {
			return err
		}
	}
	return nil
}
