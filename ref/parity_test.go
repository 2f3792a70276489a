package ref

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
)

// Inside a closed box the ray crosses once, inside two nested boxes twice,
// outside an even number of times; the orientation of the faces does not
// matter. Inactive and non-finite rows hold −1.
func TestCrossingCountsOfClosedMeshes(t *testing.T) {
	box := boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1})
	inner := flipped(boxMesh([3]float32{0.25, 0, 0}, [3]float32{0.5, 0.5, 0.5}))
	sphere := sphereMesh([3]float32{5, 0, 0}, 1, 24, 16)
	s, _ := scenes(t, box, inner, sphere)
	pts := []float32{
		0.9, -0.9, 0.3, // in the box only
		0.5, 0.1, -0.2, // in both boxes
		5.1, 0.2, -0.3, // in the sphere
		3, 0, 0, // outside everything
		-3, -3, -3, // outside, its ray passes through the box
		float32(math.NaN()), 0, 0,
		0.5, 0.5, 0.5, // inactive
	}
	active := []bool{true, true, true, true, true, true, false}
	c, err := s.CrossingCounts(pts, active)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 1, 0, c[4], -1, -1}, c)
	assert.Equal(t, int32(0), c[4]%2, "a ray from outside crosses an even number of faces")
	assert.Positive(t, c[4], "the ray from (-3, -3, -3) goes through the box")
	d := ParityDirection()
	assert.NotEqual(t, d[0], d[1])
}

func TestCrossingCountsErrors(t *testing.T) {
	s, _ := scenes(t, boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1}))
	_, err := s.CrossingCounts([]float32{1, 2}, nil)
	assert.ErrorIs(t, err, geom.ErrLength)
	_, err = s.CrossingCounts([]float32{1, 2, 3}, []bool{true, true})
	assert.ErrorIs(t, err, geom.ErrLength)
	c, err := s.CrossingCounts(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.CrossingCountsContext(ctx, []float32{1, 2, 3}, nil)
	assert.True(t, errors.Is(err, context.Canceled))
}
