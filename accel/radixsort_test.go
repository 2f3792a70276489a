package accel

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/launch"
)

// TestRadixSortRejectsBadArgumentsOnTheHost: every argument RadixSort
// cannot sort with fails before anything is queued, as ErrSortArgument
// (and launch.ErrLength for a short buffer).
func TestRadixSortRejectsBadArgumentsOnTheHost(t *testing.T) {
	keys, vals := buf[uint32](), buf[uint32]()
	sc := &RadixSortScratch{n: 3}
	cases := []struct {
		name string
		err  error
	}{
		{"nil keys", checkSort(nil, vals, 0, sc)},
		{"nil values", checkSort(keys, nil, 0, sc)},
		{"nil scratch", checkSort(keys, vals, 0, nil)},
		{"negative count", checkSort(keys, vals, -1, sc)},
		{"one buffer", checkSort(keys, keys, 0, sc)},
		{"nil stream", RadixSort(nil, keys, vals, 0, sc)},
	}
	for _, c := range cases {
		assert.ErrorIs(t, c.err, ErrSortArgument, c.name)
		assert.NotErrorIs(t, c.err, launch.ErrLength, c.name)
	}
	var le *launch.LengthError
	err := checkSort(keys, vals, 5, sc)
	require.ErrorIs(t, err, ErrSortArgument)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, launch.LengthError{What: "RadixSort scratch", Want: 5, Got: 3}, *le)
	err = checkSort(keys, vals, 2, sc)
	require.ErrorIs(t, err, launch.ErrLength)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, launch.LengthError{What: "RadixSort keys", Want: 2, Got: 0}, *le)
	assert.NoError(t, checkSort(keys, vals, 0, sc), "an empty sort needs no room")

	_, err = NewRadixSortScratch(nil, 4)
	assert.ErrorIs(t, err, ErrSortArgument)
	assert.NoError(t, (*RadixSortScratch)(nil).Close())
	assert.Equal(t, 3, sc.Cap())
}

// TestRadixSortLaunchesTheBuildPasses: RadixSort queues the build's four
// passes (histogram, two scans, scatter), each launch matching its
// kernel's CUDA signature, sized by the count sorted.
func TestRadixSortLaunchesTheBuildPasses(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleBuild: parseKernels(t, "bvh_build.cu"),
	}}
	sc := &RadixSortScratch{keys: buf[uint32](), vals: buf[uint32](), hist: buf[uint32](), sums: buf[uint32](), n: 1 << 22}
	grids := &gridRecorder{runner: rec}
	for _, n := range []int{1, 4096, 4097, 1 << 22} {
		grids.grids = map[string]uint32{}
		require.NoError(t, radixSortOn(grids, buf[uint32](), buf[uint32](), n, sc))
		tiles := uint32((n + radixTile - 1) / radixTile)
		assert.Equal(t, tiles, grids.grids["rayd_radix_hist"], "n=%d", n)
		assert.Equal(t, tiles, grids.grids["rayd_radix_scatter"], "n=%d", n)
		assert.Equal(t, (256*tiles+scanTile-1)/scanTile, grids.grids["rayd_scan_tiles"], "n=%d", n)
	}
	for _, e := range []string{"rayd_radix_hist", "rayd_scan_tiles", "rayd_scan_sums", "rayd_radix_scatter"} {
		assert.Equal(t, 4*RadixPasses, rec.seen[ModuleBuild+"."+e], e)
	}
}

// gridRecorder notes the grid of each entry launched through runner.
type gridRecorder struct {
	runner
	grids map[string]uint32
}

func (g *gridRecorder) launch(module, entry string, grid, block launch.Dim3, args ...any) error {
	g.grids[entry] = grid.X
	if err := g.runner.launch(module, entry, grid, block, args...); err != nil {
		return errors.Join(errors.New(entry), err)
	}
	return nil
}
