package ref

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flipped reverses the orientation of every face of m.
func flipped(m geom.Mesh) geom.Mesh {
	f := append([]int32(nil), m.Faces...)
	for i := 0; i < len(f); i += 3 {
		f[i+1], f[i+2] = f[i+2], f[i+1]
	}
	return geom.Mesh{Vertices: m.Vertices, Faces: f}
}

func TestWindingNumbersOfClosedMeshes(t *testing.T) {
	box := boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1})
	inner := boxMesh([3]float32{0.25, 0, 0}, [3]float32{0.5, 0.5, 0.5})
	sphere := sphereMesh([3]float32{5, 0, 0}, 1, 24, 16)
	s, _ := scenes(t, box, inner, sphere)
	pts := []float32{
		0.9, -0.9, 0.3, // in the box only
		0.5, 0.1, -0.2, // in both boxes
		5, 0.2, 0.1, // in the sphere
		3, 0, 0, // outside everything
		0, 0, 40, // far away
		1, 0.5, 0.5, // on the box's surface
	}
	w, err := s.WindingNumbers(pts, nil)
	require.NoError(t, err)
	want := []float64{1, 2, 1, 0, 0}
	for i, x := range want {
		assert.InDelta(t, x, w[i], 1e-6, "row %d", i)
	}
	// On a face, that face adds 0 or ±1/2 as rounding decides; the others 1/2.
	assert.True(t, w[5] > -1e-6 && w[5] < 1+1e-6, "on the surface: %v", w[5])

	// Reversing the faces negates every winding number.
	r, _ := scenes(t, flipped(box), flipped(inner), flipped(sphere))
	wr, err := r.WindingNumbers(pts, nil)
	require.NoError(t, err)
	for i := range w {
		assert.InDelta(t, -w[i], wr[i], 1e-6, "row %d", i)
	}
}

// An open mesh: the winding number jumps by 1 across the surface, and the
// sign rule (winding > 1/2 means inside) separates the sides of a closed
// mesh with a hole.
func TestWindingNumbersOfOpenMeshes(t *testing.T) {
	s, _ := scenes(t, unitTriangle)
	w, err := s.WindingNumbers([]float32{0.25, 0.25, 1e-6, 0.25, 0.25, -1e-6}, nil)
	require.NoError(t, err)
	assert.InDelta(t, 1, w[1]-w[0], 1e-4, "the point behind the face counts positively")
	assert.InDelta(t, 0, w[0]+w[1], 1e-6)

	box := boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1})
	holed := geom.Mesh{Vertices: box.Vertices, Faces: box.Faces[3:]} // one face missing
	h, _ := scenes(t, holed)
	w, err = h.WindingNumbers([]float32{0, 0, 0.5, 0, 0, 3, 0.5, 0.5, 0.5}, nil)
	require.NoError(t, err)
	assert.Greater(t, w[0], float32(0.5))
	assert.Less(t, w[1], float32(0.5))
	assert.Greater(t, w[2], float32(0.5))
}

func TestWindingNumbersRowsAndErrors(t *testing.T) {
	s, brute := scenes(t, boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1}))
	nan := float32(math.NaN())
	pts := []float32{0, 0, 0, nan, 0, 0, 0, 0, 0}
	w, err := s.WindingNumbers(pts, []bool{true, true, false})
	require.NoError(t, err)
	assert.InDelta(t, 1, w[0], 1e-6)
	assert.True(t, math.IsNaN(float64(w[1])) && math.IsNaN(float64(w[2])))
	wb, err := brute.WindingNumbers(pts, []bool{true, true, false})
	require.NoError(t, err)
	assert.True(t, equalBits(w, wb), "the BVH plays no part")

	_, err = s.WindingNumbers(pts[:4], nil)
	var le *LengthError
	require.ErrorIs(t, err, geom.ErrLength)
	require.True(t, errors.As(err, &le))
	assert.Equal(t, "points", le.Field)
	_, err = s.WindingNumbers(pts, []bool{true})
	require.ErrorIs(t, err, ErrLength)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	w, err = s.WindingNumbersContext(ctx, pts, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, w)
	w, err = s.WindingNumbers(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, w)
}
