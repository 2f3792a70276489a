package accel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOctantIsTheDirectionSigns(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		d    [3]float32
		want uint32
	}{
		{[3]float32{1, 1, 1}, 0}, {[3]float32{1, 1, -1}, 1}, {[3]float32{1, -1, 1}, 2},
		{[3]float32{-1, 1, 1}, 4}, {[3]float32{-1, -1, -1}, 7}, {[3]float32{negZero, 0, -2}, 1},
	} {
		assert.Equal(t, c.want, rayOctant(c.d[0], c.d[1], c.d[2]), "%v", c.d)
	}
}

func TestCellQuantizesIntoTheBox(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		v, lo, hi float32
		want      uint32
	}{
		{0, 0, 1, 0}, {0.5, 0, 1, 512}, {1, 0, 1, 1023}, {-1, 0, 1, 0}, {2, 0, 1, 1023},
		{3, -1, 7, 512}, {5, 5, 5, 0}, {nan, 0, 1, 0},
	} {
		assert.Equal(t, c.want, rayCell(c.v, c.lo, c.hi), "%v in [%v, %v]", c.v, c.lo, c.hi)
	}
}

func TestMorton30InterleavesXHigh(t *testing.T) {
	assert.Equal(t, uint32(0b100), morton30(1, 0, 0))
	assert.Equal(t, uint32(0b010), morton30(0, 1, 0))
	assert.Equal(t, uint32(0b001), morton30(0, 0, 1))
	assert.Equal(t, uint32(0b100_000), morton30(2, 0, 0))
	assert.Equal(t, uint32(0b100_100), morton30(3, 0, 0))
	assert.Equal(t, uint32(0b101_011), morton30(2, 1, 3))
	assert.Equal(t, uint32(1<<30-1), morton30(1023, 1023, 1023))
	assert.Equal(t, uint32(1<<29), morton30(512, 0, 0))
}

// TestReorderKeyPutsTheOctantAboveTheMortonCode: the octant in bits 31..29,
// below it the origin's Morton code without its lowest bit.
func TestReorderKeyPutsTheOctantAboveTheMortonCode(t *testing.T) {
	lo, hi := [3]float32{0, 0, 0}, [3]float32{1024, 1024, 1024}
	up := [3]float32{1, 1, 1}
	key := func(o, d [3]float32) uint32 { return reorderKey(o, d, lo, hi) }
	assert.Equal(t, uint32(0), key([3]float32{0, 0, 0}, up))
	assert.Equal(t, uint32(2), key([3]float32{1, 0, 0}, up))  // Morton 0b100
	assert.Equal(t, uint32(1), key([3]float32{0, 1, 0}, up))  // Morton 0b010
	assert.Equal(t, uint32(0), key([3]float32{0, 0, 1}, up))  // Morton 0b001, the dropped bit
	assert.Equal(t, uint32(16), key([3]float32{2, 0, 0}, up)) // Morton 0b100000
	assert.Equal(t, uint32(21), key([3]float32{2, 1, 3}, up)) // Morton 0b101011
	assert.Equal(t, uint32(1<<29-1), key(hi, up))             // every cell 1023
	assert.Equal(t, uint32(4<<29), key(lo, [3]float32{-1, 1, 1}))
	assert.Equal(t, uint32(7<<29|(1<<29-1)), key(hi, [3]float32{-1, -1, -1}))
	assert.Less(t, key(hi, up), key(lo, [3]float32{1, 1, -1}), "the octant orders before the origin")
}

func TestReorderKeysUseTheOriginsBox(t *testing.T) {
	o := []float32{-1, 2, 10, 3, 6, 20, 1, 4, 15}
	d := []float32{1, 1, 1, -1, 1, 1, 1, 1, -1}
	keys := ReorderKeys(o, d)
	require.Len(t, keys, 3)
	assert.Equal(t, uint32(0), keys[0], "the box's low corner")
	assert.Equal(t, uint32(4<<29|(1<<29-1)), keys[1], "the box's high corner, x negative")
	assert.Equal(t, uint32(1<<29|morton30(512, 512, 512)>>1), keys[2], "the centre, z negative")
}

// TestReorderKeysNaNOriginZeroesItsAxis: a NaN origin coordinate makes the
// box NaN on its axis (min and max propagate NaN), so every ray's cell of
// that axis is 0 while the other axes and the octant keep their bits.
func TestReorderKeysNaNOriginZeroesItsAxis(t *testing.T) {
	nan := float32(math.NaN())
	o := []float32{0, 0, 0, 8, 8, 8, nan, 4, 4}
	d := []float32{1, 1, 1, 1, -1, 1, -1, 1, 1}
	keys := ReorderKeys(o, d)
	require.Len(t, keys, 3)
	assert.Equal(t, uint32(0), keys[0])
	assert.Equal(t, uint32(2<<29|morton30(0, 1023, 1023)>>1), keys[1], "x cell 0, y and z the box's top")
	assert.Equal(t, uint32(4<<29|morton30(0, 512, 512)>>1), keys[2], "x cell 0, y and z the centre")
	assert.Empty(t, ReorderKeys(nil, nil))
}
