package accel

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// hitPoison fills every output before a run: a NaN payload no kernel writes,
// so a field a kernel fails to write (or writes when it must not) shows.
const hitPoison = 0x7fc00bad

// poisonedHits allocates every field of an n-row record, poisoned.
func poisonedHits(t testing.TB, s *launch.Stream, n int) Hits {
	t.Helper()
	h := Hits{T: devOut[float32](t, s, n), P: devOut[float32](t, s, 3*n), N: devOut[float32](t, s, 3*n),
		GeoN: devOut[float32](t, s, 3*n), UV: devOut[float32](t, s, 2*n), Bary: devOut[float32](t, s, 3*n),
		ShapeID: devOut[int32](t, s, n), PrimID: devOut[int32](t, s, n), LocalPrimID: devOut[int32](t, s, n),
		GlobalPrimID: devOut[int32](t, s, n)}
	for _, b := range []*launch.Buffer[float32]{h.T, h.P, h.N, h.GeoN, h.UV, h.Bary} {
		require.NoError(t, b.Memset32(s, hitPoison))
	}
	for _, b := range []*launch.Buffer[int32]{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID} {
		require.NoError(t, b.Memset32(s, hitPoison))
	}
	return h
}

var hitFieldNames = []string{"t", "p", "n", "geo_n", "uv", "bary", "shape_id", "prim_id", "local_prim_id", "global_prim_id"}

// rawHits downloads every allocated field of h whole, as words (nil for a
// nil field), in hitFieldNames order.
func rawHits(t testing.TB, s *launch.Stream, h Hits) [][]uint32 {
	t.Helper()
	var out [][]uint32
	for _, b := range []*launch.Buffer[float32]{h.T, h.P, h.N, h.GeoN, h.UV, h.Bary} {
		var w []uint32
		if b != nil {
			for _, x := range download(t, s, b, b.Len()) {
				w = append(w, math.Float32bits(x))
			}
		}
		out = append(out, w)
	}
	for _, b := range []*launch.Buffer[int32]{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID} {
		var w []uint32
		if b != nil {
			for _, x := range download(t, s, b, b.Len()) {
				w = append(w, uint32(x))
			}
		}
		out = append(out, w)
	}
	return out
}

// requireSameRaw requires two downloaded records to agree in every word of
// every field, the poisoned words a kernel must leave alone included.
func requireSameRaw(t testing.TB, name string, got, want [][]uint32) {
	t.Helper()
	for f := range want {
		if i := firstBitDiff(got[f], want[f]); i >= 0 {
			t.Fatalf("%s: %s differs at word %d: got %#x, want %#x", name, hitFieldNames[f], i, elem(got[f], i), elem(want[f], i))
		}
	}
}

// compactSeed is a fresh seed per run (testscene.Seed: logged when the test
// fails, replayed with RAYD_TEST_SEED).
func compactSeed(t testing.TB) uint64 { return testscene.Seed(t) }

// TestGPUCompactExpandMatchesIntersect: on every GPU test scene, both node
// layouts, fresh random rays (inactive, tmax, non-finite and zero-direction
// rows, misses), with and without tmax/active and a persistent counter:
// IntersectCompact writes the host mirror's compact records word for word,
// and ExpandHits of them writes, for every flag combination, exactly the
// words Intersect writes into poisoned outputs (unselected fields stay
// poisoned in both); a record with only some fields allocated agrees too.
func TestGPUCompactExpandMatchesIntersect(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		seed := compactSeed(t)
		for name, tb := range gpuScenes(t) {
			for _, width := range []int{2, 4, 8} {
				bvh, err := BuildWith(s, tb, Options{Width: width})
				require.NoError(t, err)
				lay, err := bvh.DownloadLayout(s)
				require.NoError(t, err)
				o, d, tmax, active := testRays(tb, 4099, seed+uint64(width))
				for _, masked := range []bool{false, true} {
					label := fmt.Sprintf("%s width %d masked %v", name, width, masked)
					tm, act := tmax, active
					if !masked {
						tm, act = nil, nil
					}
					rb := newRayBatch(t, s, o, d, tm, act)
					if masked {
						rb.dev.Counter, rb.dev.PersistentBlocks = devOut[uint32](t, s, 1), 5
					}
					checkCompactExpand(t, s, label, bvh, lay, rb)
				}
				require.NoError(t, bvh.Close())
			}
		}
	})
}

// checkCompactExpand runs the comparisons of TestGPUCompactExpandMatchesIntersect
// for one BVH and ray batch.
func checkCompactExpand(t *testing.T, s *launch.Stream, label string, bvh *BVH, lay *Layout, rb *rayBatch) {
	t.Helper()
	n := rb.dev.N
	compact := devOut[uint32](t, s, CompactWords*n)
	require.NoError(t, compact.Memset32(s, hitPoison))
	require.NoError(t, bvh.IntersectCompact(s, rb.dev, compact))
	got := download(t, s, compact, CompactWords*n)
	want, err := lay.IntersectCompact(rb.o, rb.d, rb.tmax, rb.active)
	require.NoError(t, err)
	if i := firstBitDiff(got, want); i >= 0 {
		t.Fatalf("%s: compact record of row %d is %#x, host mirror %#x", label, i/CompactWords,
			got[i/CompactWords*CompactWords:][:CompactWords], want[i/CompactWords*CompactWords:][:CompactWords])
	}
	if hits, misses := checkCompactRecords(t, lay, got); hits == 0 || misses == 0 {
		t.Fatalf("%s: %d hits, %d misses: the rays must do both", label, hits, misses)
	}
	for _, flags := range allFlags() {
		full, exp := poisonedHits(t, s, n), poisonedHits(t, s, n)
		require.NoError(t, bvh.Intersect(s, rb.dev, flags, full))
		require.NoError(t, bvh.ExpandHits(s, rb.dev, compact, flags, exp))
		requireSameRaw(t, label+" "+flags.String(), rawHits(t, s, exp), rawHits(t, s, full))
	}
	all := poisonedHits(t, s, n)
	sparse := func() Hits {
		h := poisonedHits(t, s, n)
		return Hits{T: h.T, P: h.P, UV: h.UV, PrimID: h.PrimID}
	}
	a, b := sparse(), sparse()
	require.NoError(t, bvh.Intersect(s, rb.dev, geom.FlagsAll, all))
	require.NoError(t, bvh.Intersect(s, rb.dev, geom.FlagsAll, a))
	require.NoError(t, bvh.ExpandHits(s, rb.dev, compact, geom.FlagsAll, b))
	requireSameRaw(t, label+" sparse record", rawHits(t, s, b), rawHits(t, s, a))
	full := rawHits(t, s, all)
	requireSameRaw(t, label+" sparse fields", rawHits(t, s, b), [][]uint32{full[0], full[1], nil, nil, full[4], nil, nil, full[7], nil, nil})
}

// TestGPUExpandHitsOnAnotherBVH: compact records of one BVH expand on a
// second BVH built separately from the same tables (the deterministic build
// gives the same slots) into the second's Intersect record, bit for bit.
func TestGPUExpandHitsOnAnotherBVH(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		seed := compactSeed(t)
		for _, width := range []int{2, 4, 8} {
			tb := tables(t, gridMesh(9, 3), cloudMesh(5000, 0.05, seed), gridMesh(4, 1))
			first, err := BuildWith(s, tb, Options{Width: width})
			require.NoError(t, err)
			second, err := BuildWith(s, tb, Options{Width: width})
			require.NoError(t, err)
			o, d, tmax, active := testRays(tb, 3001, seed)
			rb := newRayBatch(t, s, o, d, tmax, active)
			compact := devOut[uint32](t, s, CompactWords*rb.dev.N)
			require.NoError(t, first.IntersectCompact(s, rb.dev, compact))
			require.NoError(t, s.Synchronize())
			require.NoError(t, first.Close()) // the records outlive the BVH that traced them
			for _, flags := range allFlags() {
				full, exp := poisonedHits(t, s, rb.dev.N), poisonedHits(t, s, rb.dev.N)
				require.NoError(t, second.Intersect(s, rb.dev, flags, full))
				require.NoError(t, second.ExpandHits(s, rb.dev, compact, flags, exp))
				requireSameRaw(t, fmt.Sprintf("width %d %v", width, flags), rawHits(t, s, exp), rawHits(t, s, full))
			}
			require.NoError(t, second.Close())
		}
	})
}

// TestGPUCompactAcrossDevices: device 0 traces compact records, one peer
// copy moves them to device 1, and device 1 expands them on its own BVH
// into its own Intersect record, bit for bit, for every flag combination.
func TestGPUCompactAcrossDevices(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	s0, s1 := deviceStream(t, 0), deviceStream(t, 1)
	seed := compactSeed(t)
	tb := tables(t, cloudMesh(20000, 0.02, seed), gridMesh(30, 2))
	for _, width := range []int{2, 4, 8} {
		remote, err := BuildWith(s0, tb, Options{Width: width})
		require.NoError(t, err)
		master, err := BuildWith(s1, tb, Options{Width: width})
		require.NoError(t, err)
		o, d, tmax, active := testRays(tb, 8191, seed+uint64(width))
		r0, r1 := newRayBatch(t, s0, o, d, tmax, active), newRayBatch(t, s1, o, d, tmax, active)
		n := r0.dev.N
		c0, c1 := devOut[uint32](t, s0, CompactWords*n), devOut[uint32](t, s1, CompactWords*n)
		require.NoError(t, c1.Memset32(s1, hitPoison))
		require.NoError(t, remote.IntersectCompact(s0, r0.dev, c0))
		require.NoError(t, s0.Synchronize())
		require.NoError(t, c1.CopyFrom(s1, c0))
		own := devOut[uint32](t, s1, CompactWords*n)
		require.NoError(t, master.IntersectCompact(s1, r1.dev, own))
		if i := firstBitDiff(download(t, s1, c1, CompactWords*n), download(t, s1, own, CompactWords*n)); i >= 0 {
			t.Fatalf("width %d: compact records differ between the devices at word %d", width, i)
		}
		for _, flags := range allFlags() {
			full, exp := poisonedHits(t, s1, n), poisonedHits(t, s1, n)
			require.NoError(t, master.Intersect(s1, r1.dev, flags, full))
			require.NoError(t, master.ExpandHits(s1, r1.dev, c1, flags, exp))
			requireSameRaw(t, fmt.Sprintf("width %d %v", width, flags), rawHits(t, s1, exp), rawHits(t, s1, full))
		}
		require.NoError(t, remote.Close())
		require.NoError(t, master.Close())
	}
}

// TestGPUCompactChecks: a compact buffer that is short or not on a 16-byte
// boundary is refused before any launch, and an empty batch writes nothing.
func TestGPUCompactChecks(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		tb := tables(t, gridMesh(3, 1))
		bvh, err := BuildWith(s, tb, Options{})
		require.NoError(t, err)
		defer bvh.Close()
		o, d, _, _ := testRays(tb, 33, 1)
		rb := newRayBatch(t, s, o, d, nil, nil)
		n := rb.dev.N
		buf := devOut[uint32](t, s, CompactWords*n+4)
		short, err := buf.View(0, CompactWords*n-1)
		require.NoError(t, err)
		skewed, err := buf.View(1, CompactWords*n)
		require.NoError(t, err)
		hits := poisonedHits(t, s, n)
		require.ErrorContains(t, bvh.IntersectCompact(s, rb.dev, short), "needs")
		require.ErrorContains(t, bvh.IntersectCompact(s, rb.dev, skewed), "aligned")
		require.ErrorContains(t, bvh.ExpandHits(s, rb.dev, short, geom.FlagsAll, hits), "needs")
		require.ErrorContains(t, bvh.ExpandHits(s, rb.dev, skewed, geom.FlagsAll, hits), "aligned")
		aligned, err := buf.View(4, CompactWords*n)
		require.NoError(t, err)
		require.NoError(t, buf.Memset32(s, hitPoison))
		empty := rb.dev
		empty.N = 0
		require.NoError(t, bvh.IntersectCompact(s, empty, aligned))
		require.NoError(t, bvh.ExpandHits(s, empty, aligned, geom.FlagsAll, hits))
		for i, w := range download(t, s, buf, buf.Len()) {
			require.Equal(t, uint32(hitPoison), w, "word %d written by an empty batch", i)
		}
		require.NoError(t, bvh.IntersectCompact(s, rb.dev, aligned))
		got := download(t, s, buf, buf.Len())
		require.Equal(t, []uint32{hitPoison, hitPoison, hitPoison, hitPoison}, got[:4], "the words before the view")
		require.NotEqual(t, uint32(hitPoison), got[4+3], "row 0 written")
	})
}
