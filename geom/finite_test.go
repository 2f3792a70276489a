package geom

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// isFinite32 rejects exactly NaN (every payload, both signs) and ±Inf.
func TestIsFinite32(t *testing.T) {
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-126, math.Nextafter32(float32(math.Inf(1)), 0)} {
		require.True(t, isFinite32(v), "%v", v)
	}
	for _, bits := range []uint32{0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fc00bad, 0xffffffff} {
		require.False(t, isFinite32(math.Float32frombits(bits)), "%#x", bits)
	}
}

// A rejected SetTransforms leaves every record as it was, also when an
// earlier call of a larger batch left more scratch behind.
func TestSetTransformsAllOrNothing(t *testing.T) {
	tb, err := BuildTables([]Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(t, err)
	in := make([]Instance, 8)
	for i := range in {
		in[i] = Instance{Transform: Transform{1, 0, 0, float32(i), 0, 2, 0, 0, 0, 0, 4, 0}}
	}
	x, err := BuildInstances(tb, in)
	require.NoError(t, err)
	big := make([]Transform, 8)
	for i := range big {
		big[i] = Transform{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, float32(i)}
	}
	require.NoError(t, x.SetTransforms(0, big))
	want := x.Clone()
	bad := []Transform{Identity, Identity, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}}
	err = x.SetTransforms(2, bad)
	require.ErrorIs(t, err, ErrInvalidTransform)
	var ie *InstanceError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, 4, ie.Instance)
	require.Equal(t, want, x)
	require.NoError(t, x.SetTransforms(5, bad[:2]))
	require.Equal(t, Identity, x.Records[6].Transform)
	require.Equal(t, [9]float32{1, 0, 0, 0, 1, 0, 0, 0, 1}, x.Records[6].Inverse)
	require.Equal(t, want.Records[4], x.Records[4])
}
