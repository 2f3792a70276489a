package geom

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func instanceTables(t *testing.T) *Tables {
	t.Helper()
	tb, err := BuildTables([]Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(t, err)
	return tb
}

func TestBuildInstancesErrors(t *testing.T) {
	tb := instanceTables(t)
	_, err := BuildInstances(tb, nil)
	require.ErrorIs(t, err, ErrNoInstances)
	require.ErrorIs(t, err, ErrInvalidArgument)

	_, err = BuildInstances(tb, []Instance{{Geometry: 0, Transform: Identity}, {Geometry: 1, Transform: Identity}})
	require.ErrorIs(t, err, ErrInstanceGeometry)
	require.ErrorIs(t, err, ErrInvalidArgument)
	var ie *InstanceError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, 1, ie.Instance)

	nan := Identity
	nan[7] = float32(math.NaN())
	_, err = BuildInstances(tb, []Instance{{Geometry: 0, Transform: nan}})
	require.ErrorIs(t, err, ErrInvalidTransform)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, 0, ie.Instance)

	flat := Identity
	flat[10] = 0 // z collapses: singular
	_, err = BuildInstances(tb, []Instance{{Geometry: 0, Transform: flat}})
	require.ErrorIs(t, err, ErrInvalidTransform)
	require.Contains(t, err.Error(), "not invertible")

	_, err = TransformFrom4x4([16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1})
	require.ErrorIs(t, err, ErrInvalidTransform)
	require.Contains(t, err.Error(), "not affine")
	got, err := TransformFrom4x4([16]float32{1, 0, 0, 2, 0, 1, 0, 3, 0, 0, 1, 4, 0, 0, 0, 1})
	require.NoError(t, err)
	require.Equal(t, Transform{1, 0, 0, 2, 0, 1, 0, 3, 0, 0, 1, 4}, got)
}

// SetTransforms is all or nothing: a bad transform in the batch leaves
// every record as it was; good ones replace the transform and inverse.
func TestSetTransforms(t *testing.T) {
	tb := instanceTables(t)
	x, err := BuildInstances(tb, []Instance{{Geometry: 0, Transform: Identity}, {Geometry: 0, Transform: Identity}})
	require.NoError(t, err)
	before := x.Clone()
	scale := Transform{2, 0, 0, 1, 0, 4, 0, 0, 0, 0, 0.5, 0}
	bad := Identity
	bad[0] = float32(math.Inf(1))
	require.ErrorIs(t, x.SetTransforms(0, []Transform{scale, bad}), ErrInvalidTransform)
	require.Equal(t, before, x)
	require.ErrorIs(t, x.SetTransforms(1, []Transform{scale, scale}), ErrInstanceGeometry)
	require.ErrorIs(t, x.SetTransforms(-1, nil), ErrInstanceGeometry)
	require.NoError(t, x.SetTransforms(1, []Transform{scale}))
	require.Equal(t, scale, x.Records[1].Transform)
	require.Equal(t, [9]float32{0.5, 0, 0, 0, 0.25, 0, 0, 0, 2}, x.Records[1].Inverse)
	require.Equal(t, before.Records[0], x.Records[0])
}

// ObjectRay inverts the transform: a world ray built from an object ray
// maps back to it within float32 rounding, and t is preserved because the
// direction is not renormalised.
func TestObjectRayInvertsTransform(t *testing.T) {
	tb := instanceTables(t)
	xf := Transform{0, -2, 0, 1, 3, 0, 0, -2, 0, 0, 0.5, 4} // rotation with scales
	x, err := BuildInstances(tb, []Instance{{Geometry: 0, Transform: xf}})
	require.NoError(t, err)
	o, d := [3]float64{0.25, 0.125, 2}, [3]float64{0.5, -1, -4}
	wo := xf.Apply(o)
	zero := xf.Apply([3]float64{})
	wd := xf.Apply(d)
	var o32, d32 [3]float32
	for k := range 3 {
		o32[k], d32[k] = float32(wo[k]), float32(wd[k]-zero[k])
	}
	oo, dd := ObjectRay(&x.Records[0], o32, d32)
	for k := range 3 {
		require.InDelta(t, o[k], float64(oo[k]), 1e-6)
		require.InDelta(t, d[k], float64(dd[k]), 1e-6)
	}
	// The world normal of the object +z face of a z-scale 0.5 map stays
	// along world +z, unit length.
	n := WorldNormal(&x.Records[0], [3]float32{0, 0, 3}, NormalFloor)
	require.Equal(t, [3]float32{0, 0, 1}, n)
	require.Equal(t, [3]float32{}, WorldNormal(&x.Records[0], [3]float32{}, NormalFloor))
}
