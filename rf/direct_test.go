package rf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func benchOptions(samples int) AccumOptions {
	o := DefaultAccumOptions()
	o.DirectSamples, o.Seed = samples, 17
	return o
}

// The benchmark fixture is hand-checkable: the source sits above the grid
// plane, and every segment either stops short of the triangle or lies in
// its plane (no watertight hit), so every lane commits.
func TestBenchFixtureCommitsEveryLane(t *testing.T) {
	sc, st, g := benchFixture(t)
	r, err := AccumDfrDirect(sc, st, g, nil, nil, benchOptions(8192))
	require.NoError(t, err)
	assert.Equal(t, int32(8192), r.DirectCount)
	assert.Equal(t, int32(8192), r.EdgeUses)
	for _, c := range []int32{r.KellerCount, r.SuffixCount, r.VisRejects, r.EdgeVisRejects, r.UtdRejects} {
		assert.Zero(t, c)
	}
	for _, grid := range [][]float64{r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm} {
		assert.Equal(t, make([]float64, 16), grid)
	}
	assert.Equal(t, 4, r.Res0)
	assert.Equal(t, 4, r.Res1)

	// Recompute every lane from the spec's formulas.
	want := make([]float64, 16)
	wantAmp := make([]float64, 16)
	for l := range 8192 {
		s, cell := l%2, (l/2)%16
		u := float64(Uniform(uint32(l), 0, 17))
		x := 0.25*float64(s) + (-1 + 2*u)
		i, j := cell%4, cell/4
		tx, ty := -1+(float64(i)+0.5)*0.5, -1+(float64(j)+0.5)*0.5
		sd2 := x*x + 1 + 0.0625
		td2 := (tx-x)*(tx-x) + ty*ty
		wedge := float64(float32(math.Pi)) / (2 * math.Pi) // the exterior angle is a float32 input
		c := sq(1/(4*math.Pi)) * (2 * 2.0 / 8192) * 0.25 * wedge / (sd2 * td2)
		want[cell] += c
		wantAmp[cell] += math.Sqrt(c)
	}
	relClose(t, want, r.Power, 1e-12, 0, "power")
	relClose(t, wantAmp, r.FieldXRe, 1e-12, 0, "field_x_re")

	// Without occluders the result is bit-identical.
	free, err := AccumDfrDirect(nil, st, g, nil, nil, benchOptions(8192))
	require.NoError(t, err)
	assert.Equal(t, r, free)
}

// Each (state, cell) pair receives D/(S·C) lanes weighted len·S/D, so each
// cell estimates (1/C)·Σ_s ∫ f_s(t) dt.
func TestBenchFixtureEstimatesTheEdgeIntegral(t *testing.T) {
	sc, st, g := benchFixture(t)
	r, err := AccumDfrDirect(sc, st, g, nil, nil, benchOptions(1<<16))
	require.NoError(t, err)
	for cell := range 16 {
		i, j := cell%4, cell/4
		tx, ty := -1+(float64(i)+0.5)*0.5, -1+(float64(j)+0.5)*0.5
		var integral float64
		const n = 4000
		for s := range 2 {
			for k := range n { // midpoint rule over t ∈ [−1, 1]
				x := 0.25*float64(s) - 1 + (float64(k)+0.5)*2/n
				f := sq(1/(4*math.Pi)) * 0.25 * 0.5 / ((x*x + 1.0625) * ((tx-x)*(tx-x) + ty*ty))
				integral += f * 2 / n
			}
		}
		assert.InDeltaf(t, integral/16, r.Power[cell], 0.1*integral/16, "cell %d", cell)
	}
}

func TestBenchFixtureKellerAndSuffixReject(t *testing.T) {
	// The edge lies in the grid plane (no Keller plane hit at t > 1e-4) and
	// in the triangle's plane (the mirrored segment never crosses it).
	sc, st, g := benchFixture(t)
	o := benchOptions(64)
	o.KellerSamples, o.SuffixSamples = 96, 32
	r, err := AccumDfrDirect(sc, st, g, nil, nil, o)
	require.NoError(t, err)
	assert.Equal(t, int32(64), r.DirectCount)
	assert.Equal(t, int32(128), r.UtdRejects)
	assert.Zero(t, r.KellerCount+r.SuffixCount+r.VisRejects)
}

func TestActiveMask(t *testing.T) {
	sc, st, g := benchFixture(t)
	r, err := AccumDfrDirect(sc, st, g, nil, []bool{true, false}, benchOptions(1024))
	require.NoError(t, err)
	assert.Equal(t, int32(512), r.DirectCount)
	assert.Equal(t, int32(512), r.VisRejects) // inactive lanes count as visibility rejects
	r, err = AccumDfrDirect(sc, st, g, nil, []bool{false}, benchOptions(1024))
	require.NoError(t, err)
	assert.Equal(t, int32(1024), r.VisRejects)
	assert.Zero(t, sum(r.Power))
	all, err := AccumDfrDirect(sc, st, g, nil, []bool{true}, benchOptions(1024))
	require.NoError(t, err)
	none, err := AccumDfrDirect(sc, st, g, nil, nil, benchOptions(1024))
	require.NoError(t, err)
	assert.Equal(t, none, all)
}

func TestZeroStatesAndEmptyWindows(t *testing.T) {
	sc, _, g := benchFixture(t)
	r, err := AccumDfrDirect(sc, &DfrStates{}, g, nil, nil, benchOptions(100))
	require.NoError(t, err)
	assert.Zero(t, r.DirectCount+r.VisRejects+r.UtdRejects)
	_, st, _ := benchFixture(t)
	for _, w := range [][2]int{{0, 0}, {100, 0}, {100, -1}} {
		o := benchOptions(100)
		o.LaneOffset, o.LaneCount = w[0], w[1]
		r, err := AccumDfrDirect(sc, st, g, nil, nil, o)
		require.NoError(t, err)
		assert.Equal(t, newAccumResult(4, 4), r)
	}
}

func TestRichFixtureOutcomes(t *testing.T) {
	sc, st, g, m := richFixture(t)
	r, err := AccumDfrDirect(sc, st, g, m, nil, richOptions())
	require.NoError(t, err)
	// Every lane is counted exactly once.
	assert.Equal(t, int32(650), r.DirectCount+r.KellerCount+r.SuffixCount+r.VisRejects+r.UtdRejects)
	assert.Equal(t, r.DirectCount+r.KellerCount+r.SuffixCount, r.EdgeUses)
	for _, c := range []int32{r.DirectCount, r.KellerCount, r.SuffixCount, r.VisRejects, r.UtdRejects} {
		assert.Positive(t, c)
	}
	for i, p := range r.Power {
		assert.GreaterOrEqual(t, p, 0.0)
		// Σ√c ≥ √Σc for non-negative terms.
		assert.GreaterOrEqual(t, r.FieldXRe[i]*(1+1e-12), math.Sqrt(p))
	}
	// The suffix lanes of state 1 (prim0 = prim1) always reflect on face 1.
	c, err := newDirectCall("t", sc, st, g, m, nil, richOptions())
	require.NoError(t, err)
	for l := 500; l < 650; l++ {
		ln := c.lane(uint32(l))
		if ln.s == 1 && ln.outcome == outCommit {
			assert.Equal(t, int32(1), ln.face)
			assert.Equal(t, 1.0, ln.count)
		}
		if ln.s == 0 && ln.outcome == outCommit {
			assert.Equal(t, 2.0, ln.count)
			assert.Equal(t, int32(SuffixHash(uint32(l), 5)%2), ln.face)
		}
	}
}
