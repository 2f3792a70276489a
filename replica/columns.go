package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// spec is one column of a record: its name (for validation errors) and its
// width. A row column holds per elements per row; a fixed column holds per
// elements per chunk, whatever its rows (an output such as a chunk's
// vertex-gradient partial). Width 0 means the column is absent.
type spec struct {
	name  string
	per   int
	fixed bool
}

// col is a row column of per elements per row.
func col(name string, per int) spec { return spec{name: name, per: per} }

// fixedCol is a fixed column of n elements per chunk.
func fixedCol(name string, n int) spec { return spec{name: name, per: n, fixed: true} }

// length is the column's element count in a chunk of n rows.
func (c spec) length(n int) int {
	if c.fixed {
		return c.per
	}
	return c.per * n
}

// layout lists the columns of an operation's inputs or outputs by element
// type, in a fixed canonical order per operation.
type layout struct {
	f32, i32, u8, f64 []spec
}

// rowBytes is the size of one row of the layout's row columns (fixed
// columns are per chunk and not counted).
func (l layout) rowBytes() int {
	n := 0
	for _, set := range []struct {
		specs []spec
		size  int
	}{{l.f32, 4}, {l.i32, 4}, {l.u8, 1}, {l.f64, 8}} {
		for _, c := range set.specs {
			if !c.fixed {
				n += set.size * c.per
			}
		}
	}
	return n
}

// columns holds one buffer per column of a layout (nil where the column is
// absent). The buffers are either owned (allocated by the replica) or views
// of the caller's memory.
type columns struct {
	f32 []*launch.Buffer[float32]
	i32 []*launch.Buffer[int32]
	u8  []*launch.Buffer[uint8]
	f64 []*launch.Buffer[float64]

	// block is the staging block the columns of allocCols view (nil for
	// views of the caller's buffers): one block per chunk, taken from and
	// returned to pool, and between two blocks of the same layout and rows
	// one copy.
	block *launch.Buffer[uint8]
	stage *stageBlock
	pool  *stagingPool
}

// columnAlign is the byte alignment of each column within a block.
const columnAlign = 256

// blockBytes is the size of the block of a chunk of n rows of l and the
// byte offset of every present column in it, by element type, in layout
// order.
func blockBytes(l layout, n int) (total int, off [4][]int) {
	for k, set := range []struct {
		specs []spec
		size  int
	}{{l.f32, 4}, {l.i32, 4}, {l.u8, 1}, {l.f64, 8}} {
		off[k] = make([]int, len(set.specs))
		for i, c := range set.specs {
			off[k][i] = total
			total += (set.size*c.length(n) + columnAlign - 1) / columnAlign * columnAlign
		}
	}
	return total, off
}

// allocCols lays every present column of a chunk of n rows out in one
// block of pool (a device's staging), ready for use on s.
func allocCols(pool *stagingPool, s *launch.Stream, l layout, n int) (columns, error) {
	total, off := blockBytes(l, n)
	var c columns
	var err error
	if total > 0 {
		if c.stage, err = pool.get(s, total); err != nil {
			return columns{}, fmt.Errorf("replica: staging %d rows (%d bytes): %w", n, total, err)
		}
		c.pool = pool
		if c.block, err = c.stage.buf.View(0, total); err != nil {
			return columns{}, errors.Join(err, c.closeOn(s))
		}
	}
	c.f32, err = castSet[float32](s, c.block, l.f32, off[0], n)
	if err == nil {
		c.i32, err = castSet[int32](s, c.block, l.i32, off[1], n)
	}
	if err == nil {
		c.u8, err = castSet[uint8](s, c.block, l.u8, off[2], n)
	}
	if err == nil {
		c.f64, err = castSet[float64](s, c.block, l.f64, off[3], n)
	}
	if err != nil {
		return columns{}, errors.Join(err, c.closeOn(s))
	}
	return c, nil
}

// castSet views the present columns of one element type in block; a
// column of no elements is an empty buffer of its own (it allocates
// nothing).
func castSet[T launch.Elem](s *launch.Stream, block *launch.Buffer[uint8], l []spec, off []int, n int) ([]*launch.Buffer[T], error) {
	out := make([]*launch.Buffer[T], len(l))
	for i, c := range l {
		if c.per == 0 {
			continue
		}
		var b *launch.Buffer[T]
		var err error
		if c.length(n) == 0 {
			b, err = launch.AllocAsync[T](s, 0)
		} else {
			b, err = launch.Cast[T](block, off[i], c.length(n))
		}
		if err != nil {
			return out, fmt.Errorf("replica: column %s (%d rows): %w", c.name, n, err)
		}
		out[i] = b
	}
	return out, nil
}

// view returns rows [lo, hi) of every present column (row columns only: a
// device task's caller buffers).
func (c columns) view(l layout, lo, hi int) (columns, error) {
	var v columns
	var err error
	if v.f32, err = viewSet(c.f32, l.f32, lo, hi); err != nil {
		return v, err
	}
	if v.i32, err = viewSet(c.i32, l.i32, lo, hi); err != nil {
		return v, err
	}
	if v.u8, err = viewSet(c.u8, l.u8, lo, hi); err != nil {
		return v, err
	}
	v.f64, err = viewSet(c.f64, l.f64, lo, hi)
	return v, err
}

func viewSet[T launch.Elem](bufs []*launch.Buffer[T], l []spec, lo, hi int) ([]*launch.Buffer[T], error) {
	out := make([]*launch.Buffer[T], len(l))
	for i, c := range l {
		if c.per == 0 {
			continue
		}
		if c.fixed {
			return nil, fmt.Errorf("replica: %s is per chunk and has no rows to view", c.name)
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

// copyFrom queues copies of every column of src into c on s: a plain
// device-to-device copy when both live on one device (two replicas of one
// GPU), a peer copy otherwise (launch.Buffer.CopyFrom). c and src have the
// same layout and rows.
func (c columns) copyFrom(s *launch.Stream, src columns) error {
	if c.block != nil && src.block != nil && c.block.Len() == src.block.Len() {
		return c.block.CopyFrom(s, src.block) // one layout, one size: one copy
	}
	return errors.Join(copySet(s, c.f32, src.f32), copySet(s, c.i32, src.i32), copySet(s, c.u8, src.u8),
		copySet(s, c.f64, src.f64))
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

// closeOn releases the columns after the work queued on s: a staging block
// goes back to its pool, other owned buffers are freed in stream order.
func (c columns) closeOn(s *launch.Stream) error {
	if c.stage != nil {
		return c.pool.put(c.stage, s)
	}
	return errors.Join(closeSet(s, c.f32), closeSet(s, c.i32), closeSet(s, c.u8), closeSet(s, c.f64))
}

func closeSet[T launch.Elem](s *launch.Stream, bufs []*launch.Buffer[T]) error {
	var errs []error
	for _, b := range bufs {
		errs = append(errs, b.CloseOn(s))
	}
	return errors.Join(errs...)
}

// bytes is the size of every present column.
func (c columns) bytes() int64 {
	return setBytes(c.f32) + setBytes(c.i32) + setBytes(c.u8) + setBytes(c.f64)
}

func setBytes[T launch.Elem](bufs []*launch.Buffer[T]) int64 {
	var n int64
	for _, b := range bufs {
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
	deviceSet(c.f32, l.f32, check)
	deviceSet(c.i32, l.i32, check)
	deviceSet(c.u8, l.u8, check)
	deviceSet(c.f64, l.f64, check)
	return d, err
}

func deviceSet[T launch.Elem](bufs []*launch.Buffer[T], l []spec, check func(string, interface{ Device() *launch.Device })) {
	for i, b := range bufs {
		if b != nil && i < len(l) && l[i].per > 0 {
			check(l[i].name, b)
		}
	}
}

// download copies the first len(dst[i]) elements of every present column
// into dst[i], after the work queued on s (each copy waits for s).
// A non-empty destination without its column is an error.
func download[T launch.Elem](s *launch.Stream, bufs []*launch.Buffer[T], dst [][]T) error {
	for i, d := range dst {
		if len(d) == 0 {
			continue
		}
		if i >= len(bufs) || bufs[i] == nil {
			return fmt.Errorf("replica: output column %d of %d elements is missing", i, len(d))
		}
		if err := bufs[i].Download(s, d); err != nil {
			return err
		}
	}
	return nil
}

// downloadBools is download of one byte column into a bool slice.
func downloadBools(s *launch.Stream, b *launch.Buffer[uint8], dst []bool) error {
	if len(dst) == 0 {
		return nil
	}
	raw := make([]uint8, len(dst))
	if err := download(s, []*launch.Buffer[uint8]{b}, [][]uint8{raw}); err != nil {
		return err
	}
	for i, v := range raw {
		dst[i] = v != 0
	}
	return nil
}
