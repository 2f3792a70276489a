package rf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneState is a single state on the x axis with a source above it.
func oneState(src [3]float32, tmin, tmax float32) *DfrStates {
	return &DfrStates{
		EdgeIndex: []int32{7}, EdgePos: []float32{0, 0, 0}, EdgeDir: []float32{1, 0, 0},
		EdgeTMin: []float32{tmin}, EdgeTMax: []float32{tmax},
		N0: []float32{0, 1, 0}, N1: []float32{0, 0, 1}, Prim0: []int32{-1}, Prim1: []int32{-1},
		ExteriorAngle: []float32{1.5 * math.Pi}, Src: src[:], SrcPower: []float32{2},
	}
}

func TestCoherentPhaseAndAmplitude(t *testing.T) {
	st := oneState([3]float32{-0.5, -1, 0.75}, -2, 2)
	g := DfrGrid{Axis: 2, Position: -1, Coord0Min: 0, Coord0Max: 1, Coord1Min: 1, Coord1Max: 2, Res0: 1, Res1: 1}
	T := vec3{0.5, 1.5, -1}
	src := vec3{-0.5, -1, 0.75}
	for _, lambda := range []float64{1, 0.37, 0.05} {
		opt := DefaultCoherentOptions()
		opt.Wavelength = lambda
		r, err := AccumDfrCoherentDirect(nil, st, g, nil, nil, opt)
		require.NoError(t, err)
		require.Equal(t, []int32{1}, r.DirectCount)
		p := StationaryParameter(src, T, vec3{-2, 0, 0}, vec3{1, 0, 0})
		q := vec3{-2 + p, 0, 0}
		path := q.sub(src).norm() + T.sub(q).norm()
		// Q is the Fermat point: moving along the edge lengthens the path.
		for _, d := range []float64{-1e-3, 1e-3} {
			q2 := vec3{-2 + p + d, 0, 0}
			assert.Greater(t, q2.sub(src).norm()+T.sub(q2).norm(), path)
		}
		st0, err := checkStates("t", st)
		require.NoError(t, err)
		gv, err := checkGrid("t", g)
		require.NoError(t, err)
		c := diffractionWeight(&st0[0], matView{}, lambda, gv.area, q, T, 4)
		field := complex(r.DirectFieldXRe[0], r.DirectFieldXIm[0])
		assert.InDelta(t, c, real(field)*real(field)+imag(field)*imag(field), 1e-12*c)
		want := math.Remainder(-2*math.Pi/lambda*path, 2*math.Pi)
		got := math.Atan2(imag(field), real(field))
		assert.InDelta(t, 0, math.Remainder(got-want, 2*math.Pi), 1e-9)
		for _, grid := range [][]float64{r.DirectFieldYRe, r.DirectFieldZIm, r.MultiFieldXRe, r.MultiFieldXIm} {
			assert.Equal(t, []float64{0}, grid)
		}
	}
}

func TestCoherentSumsComplexFields(t *testing.T) {
	one := oneState([3]float32{-0.5, -1, 0.75}, -2, 2)
	two := oneState([3]float32{-0.5, -1, 0.75}, -2, 2)
	for _, p := range []*[]float32{&two.EdgePos, &two.EdgeDir, &two.EdgeTMin, &two.EdgeTMax, &two.N0, &two.N1, &two.ExteriorAngle, &two.Src, &two.SrcPower} {
		*p = append(*p, *p...)
	}
	two.EdgeIndex, two.Prim0, two.Prim1 = []int32{1, 2}, []int32{-1, -1}, []int32{-1, -1}
	g := DfrGrid{Axis: 2, Position: -1, Coord0Min: -1, Coord0Max: 1, Coord1Min: 0, Coord1Max: 2, Res0: 3, Res1: 2}
	r1, err := AccumDfrCoherentDirect(nil, one, g, nil, nil, DefaultCoherentOptions())
	require.NoError(t, err)
	r2, err := AccumDfrCoherentDirect(nil, two, g, nil, nil, DefaultCoherentOptions())
	require.NoError(t, err)
	for c := range 6 {
		// Identical states add coherently: twice the amplitude (the weight
		// doubles with S, so each amplitude grows by √2 as well).
		assert.InDelta(t, 2*math.Sqrt2*r1.DirectFieldXRe[c], r2.DirectFieldXRe[c], 1e-12)
		assert.InDelta(t, 2*math.Sqrt2*r1.DirectFieldXIm[c], r2.DirectFieldXIm[c], 1e-12)
		assert.Equal(t, int32(2), r2.DirectCount[c])
	}
}

func TestCoherentPointSelectionAndRejects(t *testing.T) {
	g := DfrGrid{Axis: 2, Position: -1, Coord0Min: 2, Coord0Max: 4, Coord1Min: 0, Coord1Max: 1, Res0: 2, Res1: 1}
	st := oneState([3]float32{0, -1, 1}, -1, 1)
	src := vec3{0, -1, 1}
	// The Fermat points of both cells lie past the edge end: the weight uses
	// the unclamped point, visibility the clamped one.
	r, err := AccumDfrCoherentDirect(nil, st, g, nil, nil, DefaultCoherentOptions())
	require.NoError(t, err)
	st0, _ := checkStates("t", st)
	gv, _ := checkGrid("t", g)
	for c := range 2 {
		T := gv.center(c)
		p := StationaryParameter(src, T, vec3{-1, 0, 0}, vec3{1, 0, 0})
		require.Greater(t, p, 2.0)
		w := diffractionWeight(&st0[0], matView{}, 1, gv.area, vec3{-1 + p, 0, 0}, T, 2)
		assert.InDelta(t, w, sq(r.DirectFieldXRe[c])+sq(r.DirectFieldXIm[c]), 1e-12*w)
	}
	// Without selection the midpoint is used.
	opt := DefaultCoherentOptions()
	opt.SelectDiffractionPoint = false
	r, err = AccumDfrCoherentDirect(nil, st, g, nil, nil, opt)
	require.NoError(t, err)
	w := diffractionWeight(&st0[0], matView{}, 1, gv.area, vec3{}, gv.center(1), 2)
	assert.InDelta(t, w, sq(r.DirectFieldXRe[1])+sq(r.DirectFieldXIm[1]), 1e-12*w)
	// A degenerate edge is a UTD reject in every cell.
	r, err = AccumDfrCoherentDirect(nil, oneState([3]float32{0, -1, 1}, 0.5, 0.5), g, nil, nil, DefaultCoherentOptions())
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 1}, r.UtdRejectCount)
	assert.Equal(t, []int32{0, 0}, r.DirectCount)
	// An inactive state counts nothing.
	r, err = AccumDfrCoherentDirect(nil, st, g, nil, []bool{false}, DefaultCoherentOptions())
	require.NoError(t, err)
	assert.Equal(t, newCoherentResult(2, 1), r)
}

func TestCoherentVisibilityPrefilter(t *testing.T) {
	// A wall between the edge and the grid blocks every target segment.
	wall := sceneOf(t, [9]float32{-10, 0.5, -10, 10, 0.5, -10, 0, 0.5, 10})
	st := oneState([3]float32{0, -1, 1}, -1, 1)
	g := DfrGrid{Axis: 2, Position: -1, Coord0Min: -1, Coord0Max: 1, Coord1Min: 1, Coord1Max: 2, Res0: 2, Res1: 2}
	r, err := AccumDfrCoherentDirect(wall, st, g, nil, nil, DefaultCoherentOptions())
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 1, 1, 1}, r.VisibilityRejectCount)
	assert.Equal(t, []int32{0, 0, 0, 0}, r.DirectCount)
	opt := DefaultCoherentOptions()
	opt.PrefilterVisibility = false
	r, err = AccumDfrCoherentDirect(wall, st, g, nil, nil, opt)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 1, 1, 1}, r.DirectCount)
	free, err := AccumDfrCoherentDirect(nil, st, g, nil, nil, DefaultCoherentOptions())
	require.NoError(t, err)
	assert.Equal(t, free, r)
}

func TestCoherentRichFixtureCountsEveryActiveLane(t *testing.T) {
	sc, st, g, m := richFixture(t)
	r, err := AccumDfrCoherentDirect(sc, st, g, m, []bool{true, false, true}, DefaultCoherentOptions())
	require.NoError(t, err)
	var n int32
	for c := range g.Cells() {
		n += r.DirectCount[c] + r.VisibilityRejectCount[c] + r.UtdRejectCount[c]
	}
	assert.Equal(t, int32(2*g.Cells()), n)
}
