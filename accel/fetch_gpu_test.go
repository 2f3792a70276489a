package accel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUDynamicFetchMatchesReference: the dynamic-fetch kernels
// (Options.Fetch FetchDynamic on a persistent launch, grids far smaller
// than the row count so that every lane takes many rows) write into
// poisoned outputs exactly what the CPU reference answers, at widths 2 and
// 4: intersect (full record and t only), the compact record expanded,
// trace_reflections (1 and 4 bounces), visible, and the masked variants
// with per-ray tmin and masks over meshes with masks. The same build with
// FetchBatch gives the same words; FetchAuto follows the scene's size.
func TestGPUDynamicFetchMatchesReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 29))
		masked := maskedTables(t, r)
		plainMeshes := masked.Meshes()
		for m := range plainMeshes {
			plainMeshes[m].Mask = nil
		}
		plain := tables(t, plainMeshes...)
		o, d, tmax, active := testRays(plain, maskedRows, r.Uint64())
		tmin, mask := testscene.RandomLimits(r, maskedRows, tmax)
		// FetchAuto on this L2-resident scene: intersect fetches
		// dynamically, trace_reflections and visible keep the batch kernels.
		auto, err := BuildWith(s, plain, Options{Width: 2})
		require.NoError(t, err)
		defer func() { _ = auto.Close() }()
		counter := devOut[uint32](t, s, 1)
		require.True(t, auto.dynamic(counter, false))
		require.False(t, auto.dynamic(counter, true))
		for _, width := range []int{2, 4} {
			name := fmt.Sprintf("width %d", width)
			testDynamicPlain(t, s, name, plain, width, o, d, tmax, active)
			testDynamicMasked(t, s, name, masked, width, o, d, tmax, active, tmin, mask)
		}
	})
}

// dynamicBVH builds tb with Fetch mode f and requires the launch choice.
func dynamicBVH(t *testing.T, s *launch.Stream, tb *geom.Tables, width int, f Fetch) *BVH {
	t.Helper()
	bvh, err := BuildWith(s, tb, Options{Width: width, Fetch: f})
	require.NoError(t, err)
	t.Cleanup(func() { _ = bvh.Close() })
	counter := devOut[uint32](t, s, 1)
	for _, short := range []bool{false, true} {
		require.Equal(t, f == FetchDynamic, bvh.dynamic(counter, short), "Fetch %v", f)
		require.False(t, bvh.dynamic(launch.Null, short), "a launch without a counter never fetches dynamically")
	}
	return bvh
}

// persistent returns r as a persistent launch of a few blocks.
func persistent(t *testing.T, s *launch.Stream, r Rays) Rays {
	r.Counter, r.PersistentBlocks = devOut[uint32](t, s, 1), 3
	return r
}

func testDynamicPlain(t *testing.T, s *launch.Stream, name string, tb *geom.Tables, width int, o, d, tmax []float32, active []bool) {
	sc, err := ref.NewScene(tb)
	require.NoError(t, err)
	dyn := dynamicBVH(t, s, tb, width, FetchDynamic)
	batch := dynamicBVH(t, s, tb, width, FetchBatch)
	rb := newRayBatch(t, s, o, d, tmax, active)
	pr := persistent(t, s, rb.dev)
	n := rb.dev.N
	want, err := sc.Intersect(o, d, tmax, active, geom.FlagsAll)
	require.NoError(t, err)
	got := maskedHits(t, s, n, func(h Hits) error { return dyn.Intersect(s, pr, geom.FlagsAll, h) })
	compareHits(t, name+" dynamic intersect", got, want)
	tOnly, err := sc.Intersect(o, d, tmax, active, geom.FlagsNone)
	require.NoError(t, err)
	gotT := deviceHits(t, s, n, geom.FlagsNone, func(h Hits) error { return dyn.Intersect(s, pr, geom.FlagsNone, h) })
	compareHits(t, name+" dynamic intersect t only", gotT, tOnly)

	compact := func(b *BVH) []uint32 {
		out := poisoned[uint32](t, s, 4*n, hitPoison)
		require.NoError(t, b.IntersectCompact(s, pr, out))
		return download(t, s, out, 4*n)
	}
	dc := compact(dyn)
	require.Equal(t, compact(batch), dc, "%s: the dynamic compact record differs from the batch kernel's", name)
	cbuf := devBuf(t, s, dc)
	exp := maskedHits(t, s, n, func(h Hits) error { return dyn.ExpandHits(s, rb.dev, cbuf, geom.FlagsAll, h) })
	compareHits(t, name+" dynamic compact expanded", exp, want)

	for _, bounces := range []int{1, 4} {
		wantR, err := sc.TraceReflections(o, d, tmax, active, bounces)
		require.NoError(t, err)
		compareReflections(t, fmt.Sprintf("%s dynamic reflections B=%d", name, bounces), s, dyn, pr, bounces, wantR)
	}
	compareVisiblePersistent(t, name+" dynamic visible", s, dyn, sc, rb, o, d)
}

func testDynamicMasked(t *testing.T, s *launch.Stream, name string, tb *geom.Tables, width int,
	o, d, tmax []float32, active []bool, tmin []float32, mask []uint8) {
	sc, err := ref.NewScene(tb)
	require.NoError(t, err)
	dyn := dynamicBVH(t, s, tb, width, FetchDynamic)
	require.NoError(t, dyn.SetFaceMasks(s, tb.FaceMasks()))
	require.True(t, dyn.Masked())
	rb := newRayBatch(t, s, o, d, tmax, active)
	lim := rb.dev
	lim.TMin, lim.Mask = devBuf(t, s, tmin), devBuf(t, s, mask)
	pr := persistent(t, s, lim)
	n := rb.dev.N
	ctx := context.Background()
	limits := geom.RayLimits{TMin: tmin, Mask: mask}
	want, err := sc.IntersectLimitsContext(ctx, o, d, tmax, active, limits, geom.FlagsAll)
	require.NoError(t, err)
	got := maskedHits(t, s, n, func(h Hits) error { return dyn.Intersect(s, pr, geom.FlagsAll, h) })
	compareHits(t, name+" dynamic masked intersect", got, want)
	for _, bounces := range []int{1, 3} {
		wantR, err := sc.TraceReflectionsLimitsContext(ctx, o, d, tmax, active, limits, bounces)
		require.NoError(t, err)
		compareReflections(t, fmt.Sprintf("%s dynamic masked reflections B=%d", name, bounces), s, dyn, pr, bounces, wantR)
	}
	compareVisiblePersistent(t, name+" dynamic masked visible", s, dyn, sc, rb, o, d)
}

// compareVisiblePersistent is compareVisible on a persistent launch, for
// segments from the ray origins to 0.7 of the directions.
func compareVisiblePersistent(t *testing.T, name string, s *launch.Stream, bvh *BVH, sc *ref.Scene, rb *rayBatch, o, d []float32) {
	t.Helper()
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.7
	}
	want, err := sc.Visible(o, end, rb.active)
	require.NoError(t, err)
	n := rb.dev.N
	vis := poisoned[uint8](t, s, n, hitPoison)
	seg := Segments{Start: rb.dev.O, End: devBuf(t, s, end), Active: rb.dev.Active, N: n,
		Counter: devOut[uint32](t, s, 1), PersistentBlocks: 3}
	require.NoError(t, bvh.Visible(s, seg, vis))
	for i, v := range download(t, s, vis, n) {
		if (v != 0) != want[i] || v > 1 {
			t.Fatalf("%s differs at row %d: got %d, want %v", name, i, v, want[i])
		}
	}
}
