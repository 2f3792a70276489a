package launch

import (
	"fmt"
	"reflect"
	"sort"
)

// Packed records: a producer writes its output columns into one contiguous
// buffer, one copy moves that buffer (across devices: one peer copy instead
// of one per column), and the consumer unpacks it into its separate column
// buffers in one launch (ptx/src/basic.cu: rayd_gather_columns and
// rayd_scatter_columns).

// ModuleBasic is the PTX module of the generic kernels (ptx/src/basic.cu).
const ModuleBasic = "basic"

// MaxColumns is the most non-empty columns one Columns holds (one grid row
// per column).
const MaxColumns = 65535

// columnThreads is the block size of the column kernels; columnBlocks caps
// the blocks per column (a grid-stride loop covers the rest).
const (
	columnThreads = 256
	columnBlocks  = 2048
)

// Memory is device memory of any element type: every *Buffer[T] is one
// (a View for memory that starts inside a buffer).
type Memory interface {
	Bytes() int
	Device() *Device
	devicePointer
}

// Column is one column of a packed record: the Bytes bytes at byte Offset
// of the packed buffer are the first Bytes bytes of Mem. Offsets and sizes
// may have any alignment; a column whose address and packed address agree
// modulo 16 is copied in 16-byte units.
type Column struct {
	Mem    Memory
	Offset int // byte offset in the packed buffer
	Bytes  int // bytes to copy (0: nothing)
}

// Columns is a packed record bound to its buffers: the packed buffer, its
// columns and the device copy of their segment table. Gather and Scatter
// then cost one launch each, for as long as the buffers live (the table
// holds their addresses: Gather and Scatter refuse a closed buffer). It
// belongs to one device.
type Columns struct {
	d        *Device
	packed   Memory
	cols     []Column // the non-empty columns
	table    *Buffer[uint64]
	maxBytes int
}

// NewColumns checks the layout and uploads its table on s (in stream
// order: work on other streams that uses the result must be ordered after
// s). The packed buffer and every column must belong to s's device and be
// open; every column must lie inside its own memory and inside the packed
// buffer; no two of the ranges involved (the columns' memory and their
// places in the packed buffer) may overlap. Errors match ErrWrongDevice,
// ErrClosed, ErrLength or ErrArgument.
func NewColumns(s *Stream, packed Memory, cols []Column) (*Columns, error) {
	c, words, err := planColumns(s.d, packed, cols)
	if err != nil {
		return nil, err
	}
	if len(c.cols) == 0 {
		return c, nil
	}
	if c.table, err = AllocAsync[uint64](s, len(words)); err != nil {
		return nil, err
	}
	if err := c.table.Upload(s, words); err != nil {
		return nil, joinClose(err, c.table)
	}
	return c, nil
}

// planColumns validates a layout and returns it with its table words:
// {column address, packed offset, bytes} per non-empty column.
func planColumns(d *Device, packed Memory, cols []Column) (*Columns, []uint64, error) {
	if err := checkMemory(d, "packed buffer", packed); err != nil {
		return nil, nil, err
	}
	c := &Columns{d: d, packed: packed}
	pbase, _, _ := packed.kernelPtr()
	var words []uint64
	var spans []span
	for i, col := range cols {
		what := fmt.Sprintf("column %d", i)
		if err := checkMemory(d, what, col.Mem); err != nil {
			return nil, nil, err
		}
		if col.Bytes < 0 || col.Bytes > col.Mem.Bytes() {
			return nil, nil, &LengthError{What: fmt.Sprintf("Columns %s bytes", what), Want: col.Mem.Bytes(), Got: col.Bytes}
		}
		if col.Offset < 0 || col.Offset > packed.Bytes()-col.Bytes {
			return nil, nil, &LengthError{What: fmt.Sprintf("Columns %s end in the packed buffer", what), Want: packed.Bytes(), Got: col.Offset + col.Bytes}
		}
		if col.Bytes == 0 {
			continue
		}
		addr, _, _ := col.Mem.kernelPtr()
		spans = append(spans, span{uint64(addr), uint64(col.Bytes), what},
			span{uint64(pbase) + uint64(col.Offset), uint64(col.Bytes), what + " in the packed buffer"})
		words = append(words, uint64(addr), uint64(col.Offset), uint64(col.Bytes))
		c.cols = append(c.cols, col)
		c.maxBytes = max(c.maxBytes, col.Bytes)
	}
	if len(c.cols) > MaxColumns {
		return nil, nil, fmt.Errorf("launch: Columns: %w: %d columns, at most %d", ErrArgument, len(c.cols), MaxColumns)
	}
	if err := disjoint(spans); err != nil {
		return nil, nil, err
	}
	return c, words, nil
}

// span is a byte range of device memory.
type span struct {
	addr, bytes uint64
	what        string
}

// disjoint reports the first two spans that overlap.
func disjoint(s []span) error {
	sort.Slice(s, func(a, b int) bool { return s[a].addr < s[b].addr })
	for k := 1; k < len(s); k++ {
		if s[k].addr < s[k-1].addr+s[k-1].bytes {
			return fmt.Errorf("launch: Columns: %w: %s overlaps %s", ErrArgument, s[k-1].what, s[k].what)
		}
	}
	return nil
}

// checkMemory requires open memory of device d.
func checkMemory(d *Device, what string, m Memory) error {
	if m == nil || reflect.ValueOf(m).IsNil() {
		return fmt.Errorf("launch: Columns: %w: %s is nil", ErrArgument, what)
	}
	_, dev, closed := m.kernelPtr()
	if closed {
		return fmt.Errorf("launch: Columns: %s: %w", what, ErrClosed)
	}
	if dev != d {
		return fmt.Errorf("launch: Columns: %s: %w: memory on %v, stream on %v", what, ErrWrongDevice, dev, d)
	}
	return nil
}

// Gather queues the unpacking of the packed buffer into the columns on s
// (rayd_gather_columns).
func (c *Columns) Gather(s *Stream) error { return c.launch(s, "rayd_gather_columns") }

// Scatter queues the packing of the columns into the packed buffer on s
// (rayd_scatter_columns).
func (c *Columns) Scatter(s *Stream) error { return c.launch(s, "rayd_scatter_columns") }

func (c *Columns) launch(s *Stream, entry string) error {
	grid, block, args, err := c.launchArgs(s)
	if err != nil || args == nil {
		return err
	}
	k, err := s.d.Kernel(ModuleBasic, entry)
	if err != nil {
		return err
	}
	return k.Launch(s, grid, block, 0, args...)
}

// launchArgs re-checks the buffers and returns the launch shape and the
// arguments of the column kernels (nil arguments: nothing to copy).
func (c *Columns) launchArgs(s *Stream) (grid, block Dim3, args []any, err error) {
	if s.d != c.d {
		return grid, block, nil, fmt.Errorf("launch: Columns: %w: layout on %v, stream on %v", ErrWrongDevice, c.d, s.d)
	}
	if c.table != nil && c.table.closed.Load() {
		return grid, block, nil, fmt.Errorf("launch: Columns: %w", ErrClosed)
	}
	if err := checkMemory(c.d, "packed buffer", c.packed); err != nil {
		return grid, block, nil, err
	}
	for i, col := range c.cols {
		if err := checkMemory(c.d, fmt.Sprintf("column %d", i), col.Mem); err != nil {
			return grid, block, nil, err
		}
	}
	if len(c.cols) == 0 {
		return grid, block, nil, nil
	}
	blocks := min((c.maxBytes+16*columnThreads-1)/(16*columnThreads), columnBlocks)
	grid = Dim3{X: uint32(max(blocks, 1)), Y: uint32(len(c.cols)), Z: 1}
	return grid, Threads(columnThreads), []any{c.table, int32(len(c.cols)), c.packed}, nil
}

// Close frees the table (in the order of the stream it was uploaded on).
// The buffers stay the caller's. Idempotent.
func (c *Columns) Close() error {
	if c == nil {
		return nil
	}
	return c.table.Close()
}

// GatherColumns unpacks packed into cols on s once: NewColumns, Gather and
// Close in stream order.
func GatherColumns(s *Stream, packed Memory, cols []Column) error {
	return onceColumns(s, packed, cols, (*Columns).Gather)
}

// ScatterColumns packs cols into packed on s once: NewColumns, Scatter and
// Close in stream order.
func ScatterColumns(s *Stream, packed Memory, cols []Column) error {
	return onceColumns(s, packed, cols, (*Columns).Scatter)
}

func onceColumns(s *Stream, packed Memory, cols []Column, run func(*Columns, *Stream) error) error {
	c, err := NewColumns(s, packed, cols)
	if err != nil {
		return err
	}
	if err := run(c, s); err != nil {
		return joinClose(err, c.table)
	}
	return c.Close()
}

// joinClose closes b after a failure and returns both errors.
func joinClose(err error, b *Buffer[uint64]) error {
	if cerr := b.Close(); cerr != nil {
		return fmt.Errorf("%w (and closing the table: %v)", err, cerr)
	}
	return err
}

var _ Memory = (*Buffer[uint8])(nil)
