package launch

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/driver"
)

// ViewAs reinterprets a range of a buffer's bytes: the address and length
// follow U's size, the view owns nothing, and out-of-range or misaligned
// requests are ErrLength errors.
func TestViewAsReinterpretsBytes(t *testing.T) {
	d := &Device{}
	b := &Buffer[uint32]{d: d, ptr: 0x10000, n: 10, owner: true}
	f, err := ViewAs[float32](b, 3, 7)
	require.NoError(t, err)
	require.Equal(t, uint64(0x10000+12), f.Addr())
	require.Equal(t, 7, f.Len())
	require.Same(t, d, f.Device())
	require.False(t, f.owner)

	u, err := ViewAs[uint64](b, 2, 3) // bytes [16, 40) of 40
	require.NoError(t, err)
	require.Equal(t, uint64(0x10000+16), u.Addr())
	require.Equal(t, 24, u.Bytes())

	i8, err := ViewAs[int8](b, 39, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(0x10000+39), i8.Addr())

	for _, bad := range [][2]int{{-1, 1}, {0, -1}, {8, 3}, {0, 11}} {
		_, err := ViewAs[float32](b, bad[0], bad[1])
		require.ErrorIs(t, err, ErrLength, "ViewAs(%d, %d)", bad[0], bad[1])
	}
	_, err = ViewAs[uint64](b, 3, 3) // bytes [24, 48) of 40
	require.ErrorIs(t, err, ErrLength)

	odd := &Buffer[uint8]{d: d, ptr: driver.DevicePtr(0x10001), n: 64}
	_, err = ViewAs[uint32](odd, 0, 4)
	require.ErrorIs(t, err, ErrLength, "a misaligned address")
	_, err = ViewAs[uint8](odd, 0, 64)
	require.NoError(t, err)
}

// A closed or empty Pinned frees nothing and reads as empty; Close of a
// nil Pinned is a no-op.
func TestPinnedCloseIsIdempotent(t *testing.T) {
	var nilP *Pinned[float32]
	require.NoError(t, nilP.Close())
	p := &Pinned[float32]{d: &Device{}}
	require.Zero(t, p.Len())
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	require.Nil(t, p.Slice())
}
