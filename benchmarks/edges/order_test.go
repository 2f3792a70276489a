package main

import (
	"math"
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

func TestDeinterleaveInvertsInterleave(t *testing.T) {
	cs := []uint32{5, 900, 1023}
	key := interleave(cs, 10)
	for k, c := range cs {
		assert.Equal(t, c, deinterleave(key, k, 10), "axis %d", k)
	}
}

func TestClippedKeys(t *testing.T) {
	// The origins' box is [0, 1]³. Row 0: a half ray from (0, 0, 0) along
	// +x, clipped to [0, 1] on its line, midpoint (0.5, 0, 0). Row 1: a
	// segment of length 0.5 from (1, 1, 1) along −z, midpoint (1, 1, 0.75).
	// Row 2: a half ray leaving the box at once (its part inside is its
	// origin).
	o := []float32{0, 0, 0, 1, 1, 1, 1, 0, 0}
	d := []float32{1, 0, 0, 0, 0, -1, 1, 0, 0}
	inf := float32(math.Inf(1))
	k := clippedKeys(o, d, []float32{inf, 0.5, inf}, "mid")
	assert.Equal(t, interleave([]uint32{512, 0, 0}, 10), k[0])
	assert.Equal(t, interleave([]uint32{1023, 1023, 768}, 10), k[1])
	assert.Equal(t, interleave([]uint32{1023, 0, 0}, 10), k[2])
	// ends: the entry and exit points' top 5 bits per axis, interleaved.
	e := clippedKeys(o, d, []float32{inf, 0.5, inf}, "ends")
	assert.Equal(t, interleave([]uint32{0, 0, 0, 31, 0, 0}, 5), e[0])
	assert.Equal(t, interleave([]uint32{31, 31, 31, 31, 31, 16}, 5), e[1])
	// mid5 keeps the direction's bits below every origin bit group.
	m := clippedKeys(o, d, []float32{inf, 0.5, inf}, "mid5")
	lo, hi := bounds(o)
	assert.Equal(t, mortonKeysIn([]float32{0.5, 0, 0, 1, 1, 0.75, 1, 0, 0}, d, lo, hi, 6, 6, "m5"), m)
	// withOrders accepts the clipped keys by name.
	b := &batch{name: "half_ray", base: "half_ray", p: o, d: d}
	out, err := withOrders([]*batch{b}, "mid")
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.Equal(t, []float32{0, 0, 0, 1, 0, 0, 1, 1, 1}, out[1].p)
}
