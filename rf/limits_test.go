package rf

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
)

// withMemoryLimit runs the test under a Go memory limit of limit bytes, so
// that the size checks do not depend on the machine's RAM.
func withMemoryLimit(t *testing.T, limit int64) {
	old := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
}

// refusedCheaply asserts that call fails with want and allocates little.
func refusedCheaply(t *testing.T, name string, want error, call func() error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := call()
	runtime.ReadMemStats(&after)
	require.ErrorIsf(t, err, want, name)
	assert.Lessf(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%s allocated to refuse", name)
}

// Results sized by the caller are refused before they are allocated, by the
// operations and by their Validate functions alike.
func TestOversizedResultsAreRefused(t *testing.T) {
	withMemoryLimit(t, 1<<30)
	sc, st, g := benchFixture(t)
	faces := sc.NumFaces()
	big := g
	big.Res0, big.Res1 = 46340, 46340 // 2.1e9 cells: int32 indices, 120 GB of grids
	refusedCheaply(t, "accum_dfr_direct", geom.ErrTooLarge, func() error {
		_, err := AccumDfrDirect(sc, st, big, nil, nil, benchOptions(64))
		return err
	})
	refusedCheaply(t, "ValidateAccumDfrDirect", geom.ErrTooLarge, func() error {
		_, err := ValidateAccumDfrDirect(faces, st, big, nil, nil, benchOptions(64))
		return err
	})
	refusedCheaply(t, "ValidateAccumDfrCoherentDirect", geom.ErrTooLarge, func() error {
		o := DefaultCoherentOptions()
		o.LaneCount = 0
		_, err := ValidateAccumDfrCoherentDirect(faces, &DfrStates{}, big, nil, nil, o)
		return err
	})

	gs := ground(t)
	rays := ReflRays{O: []float32{0, 0, 1}, D: []float32{0, 0, -1}, TxPosition: []float32{0, 0, 1}}
	bigAccum := AccumGrid{Axis: 2, Res0: 46340, Res1: 46340, Coord0Max: 1, Coord1Max: 1}
	refusedCheaply(t, "accumulate_reflections grids", geom.ErrTooLarge, func() error {
		_, err := AccumulateReflections(gs, rays, bigAccum, nil, 1, DefaultReflOptions())
		return err
	})
	wedges := DefaultReflOptions()
	wedges.CollectWedges, wedges.WedgeCapacity = true, math.MaxInt32
	small := AccumGrid{Axis: 2, Res0: 1, Res1: 1, Coord0Max: 1, Coord1Max: 1}
	refusedCheaply(t, "accumulate_reflections wedges", geom.ErrTooLarge, func() error {
		return ValidateAccumulateReflections(gs.NumFaces(), rays, small, nil, 1, wedges)
	})
	for _, b := range []int{geom.MaxBounces + 1, 1 << 30, math.MaxInt} {
		refusedCheaply(t, "accumulate_reflections bounces", geom.ErrInvalidArgument, func() error {
			_, err := AccumulateReflections(gs, rays, small, nil, b, DefaultReflOptions())
			return err
		})
	}

	psc, pst, m, _ := screenFixture(t)
	many := make([]float32, 3*46340) // T·R·M = 46340²·1 fits int32; 153 B a row does not fit 1 GiB
	one := *pst
	one.Count = 1
	refusedCheaply(t, "trace_dfr_paths", geom.ErrTooLarge, func() error {
		_, err := TraceDfrPaths(psc, many, many, &one, m, []bool{true}, DefaultPathOptions())
		return err
	})
}

// The Validate functions agree with the operations: the same error for a
// bad input, the same lane count or capacity for a good one.
func TestValidateFunctionsMatchTheOperations(t *testing.T) {
	sc, st, g := benchFixture(t)
	faces := sc.NumFaces()
	o := benchOptions(96)
	o.LaneOffset, o.LaneCount = 16, 40
	lanes, err := ValidateAccumDfrDirect(faces, st, g, nil, nil, o)
	require.NoError(t, err)
	assert.Equal(t, 40, lanes)
	_, opErr := AccumDfrDirect(sc, st, g, nil, nil, o)
	require.NoError(t, opErr)
	o.LaneCount = 200
	_, err = ValidateAccumDfrDirect(faces, st, g, nil, nil, o)
	_, opErr = AccumDfrDirect(sc, st, g, nil, nil, o)
	require.Error(t, err)
	assert.Equal(t, opErr.Error(), err.Error())
	assert.ErrorIs(t, err, ErrLaneWindow)

	co := DefaultCoherentOptions()
	lanes, err = ValidateAccumDfrCoherentDirect(faces, st, g, nil, nil, co)
	require.NoError(t, err)
	assert.Equal(t, st.StateCount()*g.Cells(), lanes)
	co.Wavelength = 0
	_, err = ValidateAccumDfrCoherentDirect(faces, st, g, nil, nil, co)
	_, opErr = AccumDfrCoherentDirect(sc, st, g, nil, nil, co)
	require.Error(t, err)
	assert.Equal(t, opErr.Error(), err.Error())

	gs := ground(t)
	rays := ReflRays{O: []float32{0, 0, 1}, D: []float32{0, 0, -1}, TxPosition: []float32{0, 0, 1}}
	grid := AccumGrid{Axis: 2, Res0: 2, Res1: 2, Coord0Max: 1, Coord1Max: 1}
	require.NoError(t, ValidateAccumulateReflections(gs.NumFaces(), rays, grid, nil, 3, DefaultReflOptions()))
	err = ValidateAccumulateReflections(gs.NumFaces(), rays, grid, DefaultMaterial(gs.NumFaces()+1), 3, DefaultReflOptions())
	_, opErr = AccumulateReflections(gs, rays, grid, DefaultMaterial(gs.NumFaces()+1), 3, DefaultReflOptions())
	require.Error(t, err)
	assert.Equal(t, opErr.Error(), err.Error())

	psc, pst, m, rx := screenFixture(t)
	on := []bool{true, true}
	capacity, err := ValidateTraceDfrPaths(psc.NumFaces(), txTwo, rx, pst, m, on, DefaultPathOptions())
	require.NoError(t, err)
	p, err := TraceDfrPaths(psc, txTwo, rx, pst, m, on, DefaultPathOptions())
	require.NoError(t, err)
	assert.Equal(t, p.Capacity, capacity)
	_, err = ValidateTraceDfrPaths(psc.NumFaces(), txTwo, rx, pst, m, on[:1], DefaultPathOptions())
	_, opErr = TraceDfrPaths(psc, txTwo, rx, pst, m, on[:1], DefaultPathOptions())
	require.Error(t, err)
	assert.Equal(t, opErr.Error(), err.Error())
}
