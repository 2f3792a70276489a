package rf

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// partitions of [0, total) into 1, 2, 3 and 7 windows, warp-aligned (interior
// boundaries multiples of 32) and not.
func partitions(total int) map[string][]int {
	return map[string][]int{
		"1":            {0, total},
		"2-aligned":    {0, 320, total},
		"2-odd":        {0, 333, total},
		"3-aligned":    {0, 224, 448, total},
		"3-odd":        {0, 1, 449, total},
		"7-aligned":    {0, 32, 64, 96, 256, 480, 608, total},
		"7-odd":        {0, 7, 27, 64, 101, 333, 500, total},
		"7-with-empty": {0, 0, 63, 63, 200, 201, 649, total},
	}
}

func assertAccumEqual(t *testing.T, want, got *AccumResult, msg string) {
	t.Helper()
	wc, gc := want.counters(), got.counters()
	for k := range wc {
		require.Equalf(t, *wc[k], *gc[k], "%s: counter %d", msg, k)
	}
	gg := got.grids()
	for k, g := range want.grids() {
		relClose(t, g, gg[k], 1e-12, 1e-300, fmt.Sprintf("%s: grid %d", msg, k))
	}
}

func TestDirectWindowsPartitionTheLaunch(t *testing.T) {
	sc, st, g, m := richFixture(t)
	active := []bool{true, false, true}
	full, err := AccumDfrDirect(sc, st, g, m, active, richOptions())
	require.NoError(t, err)
	for name, cuts := range partitions(650) {
		merged := newAccumResult(g.Res0, g.Res1)
		for w := 0; w+1 < len(cuts); w++ {
			o := richOptions()
			o.LaneOffset, o.LaneCount = cuts[w], cuts[w+1]-cuts[w]
			part, err := AccumDfrDirect(sc, st, g, m, active, o)
			require.NoError(t, err)
			require.NoError(t, merged.Add(part))
		}
		assertAccumEqual(t, full, merged, name)
	}
	// The last window may be open-ended.
	o := richOptions()
	o.LaneOffset = 333
	tail, err := AccumDfrDirect(sc, st, g, m, active, o)
	require.NoError(t, err)
	o.LaneOffset, o.LaneCount = 0, 333
	head, err := AccumDfrDirect(sc, st, g, m, active, o)
	require.NoError(t, err)
	require.NoError(t, head.Add(tail))
	assertAccumEqual(t, full, head, "open-ended")
}

func TestDirectWindowsBenchFixture(t *testing.T) {
	sc, st, g := benchFixture(t)
	full, err := AccumDfrDirect(sc, st, g, nil, nil, benchOptions(8192))
	require.NoError(t, err)
	// Two devices with equal weights: windows (0, 4096), (4096, 4096).
	merged := newAccumResult(4, 4)
	for _, w := range [][2]int{{0, 4096}, {4096, 4096}} {
		o := benchOptions(8192)
		o.LaneOffset, o.LaneCount = w[0], w[1]
		part, err := AccumDfrDirect(sc, st, g, nil, nil, o)
		require.NoError(t, err)
		assert.Equal(t, int32(4096), part.DirectCount)
		require.NoError(t, merged.Add(part))
	}
	assertAccumEqual(t, full, merged, "bench")
	require.Error(t, merged.Add(newAccumResult(2, 8)))
}

func TestCoherentWindowsPartitionTheLaunch(t *testing.T) {
	sc, st, g, m := richFixture(t)
	opt := DefaultCoherentOptions()
	full, err := AccumDfrCoherentDirect(sc, st, g, m, nil, opt)
	require.NoError(t, err)
	total := 3 * g.Cells() // 60 lanes
	for name, cuts := range map[string][]int{
		"1": {0, total}, "2": {0, 32, total}, "3": {0, 7, 33, total}, "7": {0, 1, 2, 9, 30, 31, 59, total},
	} {
		merged := newCoherentResult(g.Res0, g.Res1)
		for w := 0; w+1 < len(cuts); w++ {
			o := opt
			o.LaneOffset, o.LaneCount = cuts[w], cuts[w+1]-cuts[w]
			part, err := AccumDfrCoherentDirect(sc, st, g, m, nil, o)
			require.NoError(t, err)
			require.NoError(t, merged.Add(part))
		}
		assert.Equal(t, full.DirectCount, merged.DirectCount, name)
		assert.Equal(t, full.VisibilityRejectCount, merged.VisibilityRejectCount, name)
		assert.Equal(t, full.UtdRejectCount, merged.UtdRejectCount, name)
		relClose(t, full.DirectFieldXRe, merged.DirectFieldXRe, 1e-12, 1e-300, name)
		relClose(t, full.DirectFieldXIm, merged.DirectFieldXIm, 1e-12, 1e-300, name)
	}
	require.Error(t, full.Add(newCoherentResult(1, 1)))
}
