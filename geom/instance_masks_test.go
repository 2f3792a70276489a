package geom

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInstanceMasks(t *testing.T) {
	tb, err := BuildTables([]Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(t, err)
	x, err := BuildInstances(tb, []Instance{{Geometry: 0, Transform: Identity}, {Geometry: 0, Transform: Identity, Mask: Mask(0x02)}})
	require.NoError(t, err)
	require.Equal(t, DefaultMask, x.Records[0].Mask, "nil Mask is the default")
	require.Equal(t, uint8(0x02), x.Records[1].Mask)
	require.False(t, x.MasksDefault())
	require.NoError(t, x.SetMask(1, DefaultMask))
	require.True(t, x.MasksDefault())
	for _, i := range []int{-1, 2} {
		err := x.SetMask(i, 0)
		require.ErrorIs(t, err, ErrInstanceGeometry)
		require.ErrorIs(t, err, ErrInvalidArgument)
	}
	require.True(t, x.MasksDefault(), "a refused SetMask changes nothing")
	require.Equal(t, x.Records[1].Mask, x.Clone().Records[1].Mask)
}
