package accel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// reorderBatches are the GPU test's ray batches over tb: testRays' rows
// (a NaN origin in row 0, so the box's x axis is NaN and every x cell 0),
// and the same rows with a finite row 0 (every axis quantized).
func reorderBatches(tb *geom.Tables, n int, seed uint64) map[string][4]any {
	o, d, tmax, active := testRays(tb, n, seed)
	finite := slices.Clone(o)
	finite[0] = 0.25
	return map[string][4]any{"nan origin": {o, d, tmax, active}, "finite origins": {finite, d, tmax, active}}
}

// TestGPUReordererMatchesIntersect: on a fresh random triangle soup and
// fresh random rays (inactive, short tmax, non-finite and zero-direction
// rows, misses), for the 2-, 4- and 8-wide layouts, rays without optional
// columns, with tmax/active and a persistent counter, and with per-ray
// tmin/mask limits, and every flag combination: Reorderer.Intersect writes
// into poisoned outputs exactly the words a plain Intersect writes (the
// unselected columns stay poisoned in both), and a record with only some
// columns agrees too. The device keys and their sort equal the host's
// ReorderKeys under a stable sort, and the order is not the identity.
func TestGPUReordererMatchesIntersect(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		seed := compactSeed(t)
		rng := rand.New(rand.NewPCG(seed, 77))
		tb := tables(t, testscene.Soup(rng, 3000, 0.3))
		const n = 20_011
		r, err := NewReorderer(s.Device(), n+5) // a batch below the capacity
		require.NoError(t, err)
		defer func() { require.NoError(t, r.Close()) }()
		for name, batch := range reorderBatches(tb, n, seed) {
			o, d, tmax, active := batch[0].([]float32), batch[1].([]float32), batch[2].([]float32), batch[3].([]bool)
			tmin, mask := make([]float32, n), make([]uint8, n)
			for i := range tmin {
				tmin[i], mask[i] = rng.Float32()*0.05, uint8(rng.UintN(256))|1
			}
			for _, width := range []int{2, 4, 8} {
				bvh, err := BuildWith(s, tb, Options{Width: width})
				require.NoError(t, err)
				for _, variant := range []string{"plain", "tmax active persistent", "tmin mask"} {
					rb := newRayBatch(t, s, o, d, nil, nil)
					switch variant {
					case "tmax active persistent":
						rb = newRayBatch(t, s, o, d, tmax, active)
						rb.dev.Counter, rb.dev.PersistentBlocks = devOut[uint32](t, s, 1), 7
					case "tmin mask":
						rb.dev.TMin, rb.dev.Mask = devBuf(t, s, tmin), devBuf(t, s, mask)
					}
					label := fmt.Sprintf("%s width %d %s", name, width, variant)
					for _, flags := range allFlags() {
						want, got := poisonedHits(t, s, n), poisonedHits(t, s, n)
						require.NoError(t, bvh.Intersect(s, rb.dev, flags, want))
						require.NoError(t, r.Intersect(s, bvh, rb.dev, flags, got))
						requireSameRaw(t, label+" "+flags.String(), rawHits(t, s, got), rawHits(t, s, want))
					}
					full := poisonedHits(t, s, n)
					want, got := Hits{T: full.T, UV: full.UV, PrimID: full.PrimID}, poisonedHits(t, s, n)
					got = Hits{T: got.T, UV: got.UV, PrimID: got.PrimID}
					require.NoError(t, bvh.Intersect(s, rb.dev, geom.FlagsAll, want))
					require.NoError(t, r.Intersect(s, bvh, rb.dev, geom.FlagsAll, got))
					requireSameRaw(t, label+" partial record", rawHits(t, s, got), rawHits(t, s, want))
				}
				require.NoError(t, bvh.Close())
			}
			requireHostOrder(t, s, r, name, o, d)
		}
	})
}

// requireHostOrder requires the Reorderer's last sort to be the host's:
// the sorted device keys are ReorderKeys sorted, and Order is their stable
// order (not the identity).
func requireHostOrder(t *testing.T, s *launch.Stream, r *Reorderer, name string, o, d []float32) {
	t.Helper()
	keys := ReorderKeys(o, d)
	n := len(keys)
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	sort.SliceStable(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	sorted := make([]uint32, n)
	for j, i := range order {
		sorted[j] = keys[i]
	}
	got := download(t, s, r.keys, n)
	if i := firstBitDiff(got, sorted); i >= 0 {
		t.Fatalf("%s: sorted device key %d is %#x, host %#x", name, i, got[i], sorted[i])
	}
	perm := download(t, s, r.Order(), n)
	if i := firstBitDiff(perm, order); i >= 0 {
		t.Fatalf("%s: device order[%d] = %d, host %d", name, i, perm[i], order[i])
	}
	moved := 0
	for j, i := range perm {
		if int(i) != j {
			moved++
		}
	}
	require.Greater(t, moved, n/2, "%s: the sort must move most rays", name)
}
