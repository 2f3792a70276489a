package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestColumnsPlanAndArguments: a layout's table words, launch shape and
// arguments, packed against the manifest's layout of both column kernels.
func TestColumnsPlanAndArguments(t *testing.T) {
	d := &Device{ordinal: 0}
	s := &Stream{d: d}
	packed := &Buffer[uint8]{d: d, ptr: 0x10000, n: 1000, owner: true}
	a := &Buffer[float32]{d: d, ptr: 0x20000, n: 100, owner: true}
	b := &Buffer[int32]{d: d, ptr: 0x30000, n: 50, owner: true}
	u := &Buffer[uint8]{d: d, ptr: 0x40000, n: 7, owner: true}
	bv, err := b.View(3, 20) // starts 12 bytes in: not 16-byte aligned
	require.NoError(t, err)
	cols := []Column{{Mem: a, Offset: 0, Bytes: 400}, {Mem: u, Offset: 400, Bytes: 0}, {Mem: bv, Offset: 403, Bytes: 80},
		{Mem: u, Offset: 483, Bytes: 7}}
	c, words, err := planColumns(d, packed, cols)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0x20000, 0, 400, 0x3000c, 403, 80, 0x40000, 483, 7}, words, "empty columns are dropped")
	assert.Equal(t, 400, c.maxBytes)

	c.table = &Buffer[uint64]{d: d, ptr: 0x50000, n: len(words), owner: true}
	grid, block, args, err := c.launchArgs(s)
	require.NoError(t, err)
	assert.Equal(t, Dim3{X: 1, Y: 3, Z: 1}, grid)
	assert.Equal(t, Threads(columnThreads), block)
	for _, entry := range []string{"rayd_gather_columns", "rayd_scatter_columns"} {
		k := fakeKernel(t, d, ModuleBasic, entry)
		require.NoError(t, packAll(k, args...), entry)
		assert.Equal(t, []uint64{0x50000, 3, 0x10000}, k.args.Slots(), entry)
	}

	// Large columns: one block per 4 KiB, capped (a grid-stride loop covers
	// the rest).
	big := &Buffer[uint8]{d: d, ptr: 0x1000000, n: 1 << 30, owner: true}
	huge := &Buffer[uint8]{d: d, ptr: 0x80000000, n: 1 << 30, owner: true}
	c, _, err = planColumns(d, huge, []Column{{Mem: big, Bytes: 5*4096 + 1}})
	require.NoError(t, err)
	c.table = &Buffer[uint64]{d: d, ptr: 0x50000, n: 3}
	grid, _, _, err = c.launchArgs(s)
	require.NoError(t, err)
	assert.Equal(t, uint32(6), grid.X)
	c, _, err = planColumns(d, huge, []Column{{Mem: big, Bytes: 1 << 30}})
	require.NoError(t, err)
	c.table = &Buffer[uint64]{d: d, ptr: 0x50000, n: 3}
	grid, _, _, err = c.launchArgs(s)
	require.NoError(t, err)
	assert.Equal(t, uint32(columnBlocks), grid.X)

	// Nothing to copy: no arguments, no launch.
	c, words, err = planColumns(d, packed, []Column{{Mem: u}})
	require.NoError(t, err)
	assert.Empty(t, words)
	_, _, args, err = c.launchArgs(s)
	require.NoError(t, err)
	assert.Nil(t, args)
	require.NoError(t, c.Close())
}

func TestColumnsRejectBadLayouts(t *testing.T) {
	d := &Device{ordinal: 0}
	other := &Device{ordinal: 1}
	packed := &Buffer[uint8]{d: d, ptr: 0x10000, n: 100, owner: true}
	a := &Buffer[float32]{d: d, ptr: 0x20000, n: 10, owner: true}
	closed := &Buffer[float32]{d: d, ptr: 0x30000, n: 10, owner: true}
	closed.closed.Store(true)
	inside := &Buffer[uint8]{d: d, ptr: 0x10000 + 90, n: 10} // the packed buffer's last bytes
	cases := []struct {
		name   string
		packed Memory
		cols   []Column
		want   error
	}{
		{"nil packed", nil, nil, ErrArgument},
		{"nil column memory", packed, []Column{{Bytes: 4}}, ErrArgument},
		{"nil column buffer", packed, []Column{{Mem: (*Buffer[int32])(nil), Bytes: 4}}, ErrArgument},
		{"nil packed buffer", (*Buffer[uint8])(nil), nil, ErrArgument},
		{"column on another device", packed, []Column{{Mem: &Buffer[float32]{d: other, ptr: 0x1, n: 1}, Bytes: 4}}, ErrWrongDevice},
		{"packed on another device", &Buffer[uint8]{d: other, ptr: 0x1, n: 8}, nil, ErrWrongDevice},
		{"closed column", packed, []Column{{Mem: closed, Bytes: 4}}, ErrClosed},
		{"column longer than its memory", packed, []Column{{Mem: a, Bytes: 41}}, ErrLength},
		{"negative bytes", packed, []Column{{Mem: a, Bytes: -1}}, ErrLength},
		{"past the packed end", packed, []Column{{Mem: a, Offset: 61, Bytes: 40}}, ErrLength},
		{"negative offset", packed, []Column{{Mem: a, Offset: -1, Bytes: 4}}, ErrLength},
		{"overlap in the packed buffer", packed, []Column{{Mem: a, Offset: 0, Bytes: 20}, {Mem: spare(d), Offset: 19, Bytes: 4}}, ErrArgument},
		{"same column twice", packed, []Column{{Mem: a, Offset: 0, Bytes: 8}, {Mem: a, Offset: 50, Bytes: 8}}, ErrArgument},
		{"column inside the packed range", packed, []Column{{Mem: inside, Offset: 85, Bytes: 10}}, ErrArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := planColumns(d, c.packed, c.cols)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
		})
	}
	// Adjacent ranges are fine; a column may sit right after the packed
	// range's used bytes inside the same allocation.
	_, _, err := planColumns(d, packed, []Column{{Mem: a, Offset: 0, Bytes: 40}, {Mem: inside, Offset: 40, Bytes: 10}})
	require.NoError(t, err)

	// A layout refuses a stream of another device and buffers closed since.
	c, words, err := planColumns(d, packed, []Column{{Mem: a, Bytes: 40}})
	require.NoError(t, err)
	c.table = &Buffer[uint64]{d: d, ptr: 0x50000, n: len(words)}
	_, _, _, err = c.launchArgs(&Stream{d: other})
	assert.ErrorIs(t, err, ErrWrongDevice)
	a.closed.Store(true)
	_, _, _, err = c.launchArgs(&Stream{d: d})
	assert.ErrorIs(t, err, ErrClosed)
}

// spare is an open 4-byte buffer away from the others.
func spare(d *Device) *Buffer[int32] { return &Buffer[int32]{d: d, ptr: 0x60000, n: 1} }
