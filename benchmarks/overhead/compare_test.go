package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/rf"
)

func bits(v ...float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

// fields is a 3-row record: t (1 per row), p (3 per row), valid (bytes).
func fields() []field {
	return []field{
		{Name: "t", PerRow: 1, Single: bits(1, 2, 3), Repl: bits(1, 2, 3)},
		{Name: "p", PerRow: 3, Single: bits(0, 0, 1, 0, 1, 0, 1, 0, 0), Repl: bits(0, 0, 1, 0, 1, 0, 1, 0, 0)},
		{Name: "valid", PerRow: 1, Bytes: true, Single: []uint32{1, 0, 1}, Repl: []uint32{1, 0, 1}},
	}
}

func TestCompareFieldsEqual(t *testing.T) {
	c, err := compareFields(3, fields())
	require.NoError(t, err)
	assert.True(t, c.Pass)
	assert.True(t, c.OutputsPoisoned)
	assert.Equal(t, []string{"t", "p", "valid"}, c.Fields)
	assert.Equal(t, 3, c.RowsCompared)
	assert.Zero(t, c.RowsMismatched)
	assert.Zero(t, c.RowsPoisoned)
}

// A row differs when any element of any field differs in its bits: -0 is
// not +0, and two differing fields of one row count one row.
func TestCompareFieldsCountsRowsByBits(t *testing.T) {
	fs := fields()
	fs[1].Repl[4] = math.Float32bits(float32(math.Copysign(0, -1))) // row 1, p.y: -0 against 1
	fs[1].Repl[3] = math.Float32bits(float32(math.Copysign(0, -1))) // row 1, p.x: -0 against +0
	fs[0].Repl[1] = math.Float32bits(2.0000002)                     // row 1, t
	fs[2].Repl[2] = 0                                               // row 2, valid
	c, err := compareFields(3, fs)
	require.NoError(t, err)
	assert.False(t, c.Pass)
	assert.Equal(t, 2, c.RowsMismatched)
	assert.Equal(t, map[string]int{"t": 1, "p": 1, "valid": 1}, c.FieldMismatches)
	assert.Zero(t, c.RowsPoisoned)
}

// A row left with its scene's poison fails, on either side; a row both
// scenes left unwritten differs too, because the patterns differ.
func TestCompareFieldsCatchesPoisonedRows(t *testing.T) {
	fs := fields()
	fs[1].Repl[7] = replPoison.Word             // row 2 of the replicated p
	fs[2].Single[0] = uint32(singlePoison.Byte) // row 0 of the single valid
	fs[2].Repl[0] = uint32(singlePoison.Byte)   // ... equal on both sides, still poisoned
	c, err := compareFields(3, fs)
	require.NoError(t, err)
	assert.False(t, c.Pass)
	assert.Equal(t, 2, c.RowsPoisoned)
	assert.Equal(t, 1, c.RowsMismatched, "row 0 is equal, row 2 differs")

	both := fields()
	both[0].Single[1], both[0].Repl[1] = singlePoison.Word, replPoison.Word
	c, err = compareFields(3, both)
	require.NoError(t, err)
	assert.Equal(t, 1, c.RowsMismatched)
	assert.Equal(t, 1, c.RowsPoisoned)
	assert.NotEqual(t, singlePoison.Word, replPoison.Word)
	assert.NotEqual(t, singlePoison.Byte, replPoison.Byte)
	for _, p := range []poison{singlePoison, replPoison} {
		assert.True(t, math.IsNaN(float64(math.Float32frombits(p.Word))), "the word poison is a NaN")
		assert.Greater(t, p.Byte, uint8(1), "the byte poison is no boolean")
	}
}

func TestCompareFieldsRefusesBadShapes(t *testing.T) {
	_, err := compareFields(3, nil)
	assert.Error(t, err)
	fs := fields()
	fs[1].Repl = fs[1].Repl[:8]
	_, err = compareFields(3, fs)
	assert.ErrorContains(t, err, "field p")
	_, err = compareFields(4, fields())
	assert.Error(t, err)
}

func accumResult(power ...float64) *rf.AccumResult {
	n := len(power)
	return &rf.AccumResult{Res0: n, Res1: 1, Power: power, FieldXRe: make([]float64, n), FieldXIm: make([]float64, n),
		FieldYRe: make([]float64, n), FieldYIm: make([]float64, n), FieldZRe: make([]float64, n), FieldZIm: make([]float64, n),
		DirectCount: 100, VisRejects: 7, EdgeUses: 100}
}

func TestCompareAccum(t *testing.T) {
	want := accumResult(3, 4)
	c, err := compareAccum(want, accumResult(3, 4))
	require.NoError(t, err)
	assert.True(t, c.Pass)
	assert.False(t, c.OutputsPoisoned)
	assert.True(t, *c.CountersEqual)
	assert.Zero(t, *c.GridRelL2)
	assert.Len(t, c.Fields, 14, "seven grids and seven counters")

	// 3+4i against 3+4.000004: 4e-6 / 5 = 8e-7 relative, within 1e-6.
	c, err = compareAccum(want, accumResult(3, 4.000004))
	require.NoError(t, err)
	assert.True(t, c.Pass)
	assert.InDelta(t, 8e-7, *c.GridRelL2, 1e-12)

	c, err = compareAccum(want, accumResult(3, 4.00001))
	require.NoError(t, err)
	assert.False(t, c.Pass, "2e-6 relative is beyond the tolerance")

	off := accumResult(3, 4)
	off.UtdRejects = 1
	c, err = compareAccum(want, off)
	require.NoError(t, err)
	assert.False(t, c.Pass)
	assert.False(t, *c.CountersEqual)

	nan := accumResult(3, math.NaN())
	c, err = compareAccum(want, nan)
	require.NoError(t, err)
	assert.False(t, c.Pass)
	_, err = json.Marshal(c)
	assert.NoError(t, err, "a NaN cell is still written")

	_, err = compareAccum(want, accumResult(3))
	assert.Error(t, err)
	_, err = compareAccum(nil, want)
	assert.Error(t, err)
}
