package geom

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewClosestPointsIsAllMisses(t *testing.T) {
	c := NewClosestPoints(2)
	require.Equal(t, 2, c.Len())
	assert.Len(t, c.Point, 6)
	assert.Len(t, c.Bary, 6)
	for i := range 2 {
		assert.False(t, c.Valid(i))
		assert.True(t, math.IsInf(float64(c.Dist[i]), 1))
		assert.Equal(t, []int32{InvalidID, InvalidID, InvalidID}, []int32{c.ShapeID[i], c.LocalFaceID[i], c.GlobalFaceID[i]})
	}
	c.Dist[1], c.Point[3], c.Bary[5], c.ShapeID[1], c.LocalFaceID[1], c.GlobalFaceID[1] = 2, 1, 1, 0, 3, 3
	assert.True(t, c.Valid(1))
	c.SetMiss(1)
	assert.Equal(t, NewClosestPoints(2), c)
}

func TestCheckPoints(t *testing.T) {
	n, err := CheckPoints(make([]float32, 6), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	n, err = CheckPoints(make([]float32, 6), make([]bool, 2))
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	var le *LengthError
	_, err = CheckPoints(make([]float32, 5), nil)
	require.ErrorIs(t, err, ErrLength)
	require.True(t, errors.As(err, &le))
	assert.Equal(t, LengthError{Field: "points", Want: -1, Got: 5, PerRow: 3}, *le)
	_, err = CheckPoints(make([]float32, 6), make([]bool, 3))
	require.True(t, errors.As(err, &le))
	assert.Equal(t, LengthError{Field: "active", Want: 2, Got: 3, PerRow: 1}, *le)
}

func TestCheckMaxDist(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		in   float32
		want float64
	}{{0, inf}, {-1, inf}, {float32(math.Inf(-1)), inf}, {float32(inf), inf}, {3, 9},
		{0.5, 0.25},
		{math.MaxFloat32, 0x1.fffffc000002p+255}, {0x1p-149, 0x1p-298}} {
		got, err := CheckMaxDist(c.in)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%v", c.in)
	}
	_, err := CheckMaxDist(float32(math.NaN()))
	var ae *ArgumentError
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, "maxDist", ae.Field)
}
