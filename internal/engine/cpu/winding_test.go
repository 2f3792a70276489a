package cpu_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine/cpu"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// WindingSigns settles the rows their bound decides and re-computes the
// others with the reference: with exact sums, with sums whose bounds leave
// every row open, and with sums off by less than their bounds, the signs
// are the reference's. Mismatched sums are a length error.
func TestWindingSignsRecheckOpenRows(t *testing.T) {
	tb, err := geom.BuildTables([]geom.Mesh{testscene.Box([3]float32{0, 0, 0}, [3]float32{1, 1, 1}),
		testscene.Grid(4, 2, 3)})
	require.NoError(t, err)
	s, err := ref.NewScene(tb)
	require.NoError(t, err)
	r := testscene.Rand(t)
	pts := make([]float32, 3*300)
	for i := range pts {
		pts[i] = float32(r.Float64()*4 - 2)
	}
	copy(pts, []float32{1, 0.2, 0.3, 0, 0, -1, float32(math.NaN()), 0, 0}) // on faces, non-finite
	active := make([]bool, 300)
	for i := range active {
		active[i] = i%7 != 3
	}
	ctx := context.Background()
	exact, err := s.WindingSumsContext(ctx, pts, active)
	require.NoError(t, err)
	want := make([]int8, 300)
	inside := 0
	for i, v := range exact.Sum {
		want[i], _ = geom.WindingSign(v, 0)
		if want[i] == -1 {
			inside++
		}
	}
	assert.Positive(t, inside)
	assert.Equal(t, int8(0), want[2], "non-finite row")

	got, err := cpu.WindingSigns(ctx, tb, pts, active, exact)
	require.NoError(t, err)
	assert.Equal(t, want, got, "exact sums")

	wide := &geom.WindingSums{Sum: exact.Sum, Bound: make([]float64, 300)}
	for i := range wide.Bound {
		wide.Bound[i] = 100 // every row open
	}
	got, err = cpu.WindingSigns(ctx, tb, pts, active, wide)
	require.NoError(t, err)
	assert.Equal(t, want, got, "every row re-computed")

	off := &geom.WindingSums{Sum: make([]float64, 300), Bound: make([]float64, 300)}
	for i, v := range exact.Sum {
		off.Sum[i], off.Bound[i] = v+1e-9*float64(i%3-1), 2e-9
	}
	got, err = cpu.WindingSigns(ctx, tb, pts, active, off)
	require.NoError(t, err)
	assert.Equal(t, want, got, "sums within their bounds")

	_, err = cpu.WindingSigns(ctx, tb, pts, active, &geom.WindingSums{Sum: exact.Sum[:5], Bound: exact.Bound[:5]})
	assert.ErrorIs(t, err, geom.ErrLength)
	_, err = cpu.WindingSigns(ctx, tb, pts, active, nil)
	assert.ErrorIs(t, err, geom.ErrLength)
}
