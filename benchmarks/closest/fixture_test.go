package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
)

// The benchmark's points lie in the mesh's box and cover it.
func TestBoxPointsFillTheBox(t *testing.T) {
	tb, err := geom.BuildTables([]geom.Mesh{workload.GridMesh(8, 2)})
	require.NoError(t, err)
	p := boxPoints(tb, 4000, 1)
	lo, hi := [3]float32{1e9, 1e9, 1e9}, [3]float32{-1e9, -1e9, -1e9}
	for i, v := range tb.Vertices {
		lo[i%3], hi[i%3] = min(lo[i%3], v), max(hi[i%3], v)
	}
	plo, phi := [3]float32{1e9, 1e9, 1e9}, [3]float32{-1e9, -1e9, -1e9}
	for i, v := range p {
		k := i % 3
		require.GreaterOrEqual(t, v, lo[k])
		require.LessOrEqual(t, v, hi[k])
		plo[k], phi[k] = min(plo[k], v), max(phi[k], v)
	}
	for k := range 3 {
		assert.Less(t, float64(plo[k]-lo[k]), 0.05*float64(hi[k]-lo[k])+1e-6)
		assert.Less(t, float64(hi[k]-phi[k]), 0.05*float64(hi[k]-lo[k])+1e-6)
	}
}

// sameRow compares every bit (−0 and +0 differ) and unwritten sees each
// output's poison.
func TestRowComparisonAndPoison(t *testing.T) {
	a, b := geom.NewClosestPoints(1), geom.NewClosestPoints(1)
	assert.True(t, sameRow(a, 0, b, 0))
	b.Bary[1] = float32(math.Copysign(0, -1))
	assert.False(t, sameRow(a, 0, b, 0))
	assert.False(t, unwritten(a, 0, 0))
	a.GlobalFaceID[0] = poisonI[1]
	assert.True(t, unwritten(a, 0, 1))
	assert.False(t, unwritten(a, 0, 0))
	a.GlobalFaceID[0] = 0
	a.Point[2] = math.Float32frombits(poisonF[0])
	assert.True(t, unwritten(a, 0, 0))
}
