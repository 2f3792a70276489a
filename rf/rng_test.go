package rf

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Golden values computed independently (arbitrary-precision integers masked
// to 32 bits) from the spec's definition of the hash.
func TestHashGolden(t *testing.T) {
	for _, c := range []struct{ in, out uint32 }{
		{0, 0}, {1, 0x688990c0}, {2, 0xd1132181}, {17, 0x4ca56ae5},
		{0xdeadbeef, 0xe628c683}, {0xffffffff, 0x6768824a},
	} {
		assert.Equalf(t, c.out, Hash(c.in), "Hash(%#x)", c.in)
	}
}

func TestUniformGolden(t *testing.T) {
	assert.Equal(t, float32(0.6461623311042786), Uniform(0, 0, 17))
	assert.Equal(t, float32(2.9325485229492188e-05), Uniform(5, 0, 17))
	assert.Equal(t, float32(0.32069748640060425), Uniform(5, 1, 17))
	assert.Equal(t, float32(0.8772071599960327), Uniform(1000, 1, 0))
	// 17·Golden wraps to 0x81af1549.
	assert.Equal(t, Hash(7^0x81af1549^3), SuffixHash(7, 3))
}

func TestUniformIs24BitExact(t *testing.T) {
	for lane := uint32(0); lane < 5000; lane++ {
		u := Uniform(lane, lane%3, 99)
		require.True(t, u >= 0 && u < 1)
		scaled := float64(u) * (1 << 24)
		require.Equal(t, scaled, float64(int64(scaled)), "lane %d", lane)
		require.Equal(t, uint32(scaled), Hash(lane^((lane%3)*Golden)^99)&0xFFFFFF)
	}
}

func TestLaneMaps(t *testing.T) {
	s, c := DirectLane(37, 3, 5)
	assert.Equal(t, []int{1, 2}, []int{s, c}) // 37 mod 3, (37 div 3) mod 5
	s, c = CoherentLane(37, 3)
	assert.Equal(t, []int{1, 12}, []int{s, c})
	tx, rx, st := PathLane(37, 3, 4) // pair 12 → rx 0, tx 3
	assert.Equal(t, []int{3, 0, 1}, []int{tx, rx, st})
	for g := uint32(0); g < 60; g++ {
		tx, rx, st := PathLane(g, 3, 4)
		require.Equal(t, int(g), (tx*4+rx)*3+st)
	}
	assert.Equal(t, LaneDirect, KindOf(9, 10, 5))
	assert.Equal(t, LaneKeller, KindOf(10, 10, 5))
	assert.Equal(t, LaneSuffix, KindOf(15, 10, 5))
	assert.Equal(t, "keller", LaneKeller.String())
	assert.Equal(t, "invalid", LaneKind(9).String())
}

func TestResolveWindow(t *testing.T) {
	for _, c := range []struct{ off, cnt, total, want int }{
		{0, -1, 64, 64}, {0, 64, 64, 64}, {0, 0, 64, 0}, {64, 0, 64, 0}, {64, -1, 64, 0}, {10, 20, 64, 20}, {10, -1, 64, 54},
	} {
		n, err := ResolveWindow(c.off, c.cnt, c.total)
		require.NoError(t, err)
		assert.Equal(t, c.want, n)
	}
	for _, c := range []struct {
		off, cnt, total int
		field, msg      string
	}{
		{-1, 8, 64, "lane_offset", "lane_offset must be non-negative."},
		{65, -1, 64, "lane_offset", "lane_offset must not exceed the total sample count."},
		{16, 49, 64, "lane_count", "lane_offset + lane_count must not exceed the total sample count."},
	} {
		_, err := ResolveWindow(c.off, c.cnt, c.total)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrLaneWindow)
		assert.ErrorIs(t, err, ErrInvalidArgument)
		assert.NotErrorIs(t, err, ErrLength)
		var ve *ValidationError
		require.True(t, errors.As(err, &ve))
		assert.Equal(t, c.field, ve.Field)
		assert.Contains(t, err.Error(), c.msg)
	}
}
