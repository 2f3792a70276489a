package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInterleave(t *testing.T) {
	// cs[0] supplies the highest bit of each group.
	assert.Equal(t, uint32(0b100), interleave([]uint32{1, 0, 0}, 1))
	assert.Equal(t, uint32(0b110_001), interleave([]uint32{0b10, 0b10, 0b01}, 2))
	assert.Equal(t, uint32(0b11111_11111), interleave([]uint32{3, 3, 3, 3, 3}, 2))
}

func TestMortonKeysQuantize(t *testing.T) {
	o := []float32{0, 0, 0, 1, 1, 1, 0.5, 0, 0}
	d := []float32{1, 0, 0, 0, 0, -1, 0, 1, 0}
	k := mortonKeys(o, d, 6, 6, "org")
	// The origins' box is [0, 1]³: row 0 sits in cell 0 on every axis, row
	// 1 in the last cell, row 2 in the middle of x.
	assert.Equal(t, uint32(0), k[0]>>12)
	assert.Equal(t, uint32(1<<18-1), k[1]>>12)
	assert.Equal(t, interleave([]uint32{32, 0, 0}, 6), k[2]>>12)
	// +x maps to u = 1 (the last cell), v = 0 (the middle), +y to u = 0,
	// v = 1; −z folds to the corners of the octahedral square.
	assert.Equal(t, interleave([]uint32{63, 32}, 6), k[0]&(1<<12-1))
	assert.Equal(t, interleave([]uint32{63, 63}, 6), k[1]&(1<<12-1))
	assert.Equal(t, interleave([]uint32{32, 63}, 6), k[2]&(1<<12-1))
	// xyz: the origin's 30-bit code alone, with or without directions.
	assert.Equal(t, []uint32{0, 1<<30 - 1, interleave([]uint32{512, 0, 0}, 10)}, mortonKeys(o, nil, 10, 0, "xyz"))
	assert.Equal(t, mortonKeys(o, nil, 10, 0, "xyz"), mortonKeys(o, d, 10, 0, "xyz"))
	for _, mode := range []string{"m5", "dir"} {
		ob, db := 6, 6
		if mode == "dir" {
			ob, db = 7, 5
		}
		for _, key := range mortonKeys(o, d, ob, db, mode) {
			assert.Less(t, key, uint32(1)<<(3*ob+2*db), mode)
		}
	}
}

func TestWithOrders(t *testing.T) {
	b := &batch{name: "segment", base: "segment", p: []float32{1, 1, 1, 0, 0, 0}, d: []float32{0, 0, 1, 0, 0, 1}, tmax: []float32{2, 3}}
	pt := &batch{name: "point", base: "point", p: []float32{0, 0, 0}}
	out, err := withOrders([]*batch{pt, b}, "org")
	require.NoError(t, err)
	require.Len(t, out, 3)
	s := out[2]
	assert.Equal(t, "segment@org", s.name)
	assert.Equal(t, "segment", s.base)
	assert.Equal(t, "segment@org", s.rows)
	// The row at the origin sorts first; each row keeps its direction and
	// range.
	assert.Equal(t, []float32{0, 0, 0, 1, 1, 1}, s.p)
	assert.Equal(t, []float32{3, 2}, s.tmax)
	assert.Equal(t, []float32{1, 1, 1}, b.p[:3], "the drawn batch is unchanged")

	// xyz orders the point batch too (by the point's Morton code alone).
	pts := &batch{name: "point", base: "point", p: []float32{1, 1, 1, 0, 0, 0, 0.5, 0, 0}}
	out, err = withOrders([]*batch{pts, b}, "xyz")
	require.NoError(t, err)
	require.Len(t, out, 4)
	assert.Equal(t, "point@xyz", out[2].name)
	assert.Equal(t, "point", out[2].base)
	assert.Nil(t, out[2].d, "a point batch stays a point batch")
	assert.Equal(t, []float32{0, 0, 0, 0.5, 0, 0, 1, 1, 1}, out[2].p)
	assert.Equal(t, "segment@xyz", out[3].name)
	assert.Equal(t, []float32{0, 0, 1, 0, 0, 1}, out[3].d)

	same, err := withOrders([]*batch{b}, "")
	require.NoError(t, err)
	assert.Equal(t, []*batch{b}, same)
	_, err = withOrders([]*batch{b}, "hilbert")
	assert.ErrorContains(t, err, `unknown row order "hilbert"`)
}
