package accel

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// TestGPURadixSortMatchesStableHostSort: RadixSort of fresh random keys
// (the full 32 bits, and keys drawn from a few values so that most are
// equal) carrying their input positions gives exactly sort.SliceStable's
// order: keys ascending, equal keys in input order. Counts below one tile,
// off the tile size, and a sort of fewer pairs than the buffers and scratch
// hold, which leaves the tail untouched.
func TestGPURadixSortMatchesStableHostSort(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 41))
		const capacity = 300_001
		sc, err := NewRadixSortScratch(s.Device(), capacity)
		require.NoError(t, err)
		defer func() { require.NoError(t, sc.Close()) }()
		keysBuf, valsBuf := devOut[uint32](t, s, capacity), devOut[uint32](t, s, capacity)
		for _, n := range []int{1, 1000, 4096, 4097, 123_457, capacity} {
			for _, spread := range []uint32{0, 7} { // 0: any 32-bit key
				name := fmt.Sprintf("n=%d spread=%d", n, spread)
				keys, vals := make([]uint32, capacity), make([]uint32, capacity)
				for i := range keys {
					keys[i], vals[i] = r.Uint32(), uint32(i)
					if spread != 0 {
						keys[i] = r.Uint32N(spread) << 29 // equal low digits, ties everywhere
					}
				}
				require.NoError(t, keysBuf.Upload(s, keys), name)
				require.NoError(t, valsBuf.Upload(s, vals), name)
				require.NoError(t, RadixSort(s, keysBuf, valsBuf, n, sc), name)
				gotK, gotV := download(t, s, keysBuf, capacity), download(t, s, valsBuf, capacity)
				order := make([]int, n)
				for i := range order {
					order[i] = i
				}
				sort.SliceStable(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
				bad := 0
				for j, i := range order {
					if gotK[j] != keys[i] || gotV[j] != uint32(i) {
						bad++
					}
				}
				assert.Zero(t, bad, "%s: pairs out of stable order", name)
				assert.Equal(t, keys[n:], gotK[n:], "%s: keys past n", name)
				assert.Equal(t, vals[n:], gotV[n:], "%s: values past n", name)
			}
		}
		short := devOut[uint32](t, s, 10)
		err = RadixSort(s, keysBuf, short, 11, sc)
		assert.ErrorIs(t, err, ErrSortArgument)
		assert.ErrorIs(t, err, launch.ErrLength)
		assert.ErrorIs(t, RadixSort(s, keysBuf, valsBuf, capacity+1, sc), launch.ErrLength)
		same, err := keysBuf.View(0, 10)
		require.NoError(t, err)
		assert.ErrorIs(t, RadixSort(s, keysBuf, same, 10, sc), ErrSortArgument)
	})
}
