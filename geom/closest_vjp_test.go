package geom

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func vjpTables(t *testing.T) *Tables {
	t.Helper()
	tb, err := BuildTables([]Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(t, err)
	return tb
}

// A row above the face at height 2 with weights (½, ¼, ¼): the distance
// gradient is (0, 0, gD) for the point and −b_k·(0, 0, gD) for vertex k;
// the point cotangent reaches vertex k scaled by b_k; a miss row adds
// nothing.
func TestClosestPointsVJPOfOneRow(t *testing.T) {
	tb := vjpTables(t)
	points := []float32{0.25, 0.25, 2, 9, 9, 9}
	dp, dv, err := ClosestPointsVJP(tb, points, []int32{0, InvalidID}, []float32{0.5, 0.25, 0.25, 0, 0, 0},
		ClosestCotangents{Dist: []float32{3, 5}, Point: []float32{1, 0, 0, 7, 7, 7}})
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0, 3, 0, 0, 0}, dp)
	assert.InDeltaSlice(t, []float64{0.5, 0, -1.5, 0.25, 0, -0.75, 0.25, 0, -0.75}, dv, 1e-15)
}

func TestClosestPointsVJPErrors(t *testing.T) {
	tb := vjpTables(t)
	p := []float32{0, 0, 1}
	for name, c := range map[string]struct {
		points []float32
		faces  []int32
		bary   []float32
		g      ClosestCotangents
		want   error
	}{
		"points":     {[]float32{0, 0}, []int32{0}, []float32{1, 0, 0}, ClosestCotangents{}, ErrLength},
		"faces":      {p, nil, []float32{1, 0, 0}, ClosestCotangents{}, ErrLength},
		"bary":       {p, []int32{0}, []float32{1}, ClosestCotangents{}, ErrLength},
		"dist":       {p, []int32{0}, []float32{1, 0, 0}, ClosestCotangents{Dist: []float32{1, 1}}, ErrLength},
		"point":      {p, []int32{0}, []float32{1, 0, 0}, ClosestCotangents{Point: []float32{1}}, ErrLength},
		"face range": {p, []int32{1}, []float32{1, 0, 0}, ClosestCotangents{}, ErrInvalidArgument},
		"negative":   {p, []int32{-2}, []float32{1, 0, 0}, ClosestCotangents{}, ErrInvalidArgument},
	} {
		_, _, err := ClosestPointsVJP(tb, c.points, c.faces, c.bary, c.g)
		assert.ErrorIs(t, err, c.want, name)
	}
	dp, dv, err := ClosestPointsVJP(tb, nil, nil, nil, ClosestCotangents{})
	require.NoError(t, err)
	assert.Empty(t, dp)
	assert.Equal(t, make([]float64, 9), dv)
}
