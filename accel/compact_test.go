package accel

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// allFlags is every flag combination of intersect.
func allFlags() []geom.Flags {
	var out []geom.Flags
	for f := geom.FlagsNone; f <= geom.FlagsAll; f++ {
		out = append(out, f)
	}
	return out
}

// firstBitDiff returns the first index where a and b differ in their bits
// (−0 and +0 differ), or −1.
func firstBitDiff[T float32 | int32 | uint32](a, b []T) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if bits32(a[i]) != bits32(b[i]) {
			return i
		}
	}
	return -1
}

func bits32[T float32 | int32 | uint32](v T) uint32 {
	switch x := any(v).(type) {
	case float32:
		return math.Float32bits(x)
	case int32:
		return uint32(x)
	default:
		return x.(uint32)
	}
}

// requireSameHitBits requires two records to hold the same fields with the
// same bits (no ±0 allowance).
func requireSameHitBits(t testing.TB, name string, got, want *geom.Hits) {
	t.Helper()
	if got.Flags != want.Flags {
		t.Fatalf("%s: flags %v, want %v", name, got.Flags, want.Flags)
	}
	for _, f := range []struct {
		name string
		g, w []float32
	}{{"t", got.T, want.T}, {"p", got.P, want.P}, {"n", got.N, want.N}, {"geo_n", got.GeoN, want.GeoN},
		{"uv", got.UV, want.UV}, {"bary", got.Bary, want.Bary}} {
		if i := firstBitDiff(f.g, f.w); i >= 0 {
			t.Fatalf("%s: %s differs at element %d: got %v, want %v", name, f.name, i, elem(f.g, i), elem(f.w, i))
		}
	}
	for _, f := range []struct {
		name string
		g, w []int32
	}{{"shape_id", got.ShapeID, want.ShapeID}, {"prim_id", got.PrimID, want.PrimID},
		{"local_prim_id", got.LocalPrimID, want.LocalPrimID}, {"global_prim_id", got.GlobalPrimID, want.GlobalPrimID}} {
		if i := firstBitDiff(f.g, f.w); i >= 0 {
			t.Fatalf("%s: %s differs at row %d: got %v, want %v", name, f.name, i, elem(f.g, i), elem(f.w, i))
		}
	}
}

// compactScenes are the geometries of the compact-record tests: one
// triangle, equal-t ties, a grid with shared edges, a cloud and a mix of
// meshes (shape and local ids).
func compactScenes(t testing.TB) map[string]*geom.Tables {
	one := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	same := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}}
	for range 300 {
		same.Faces = append(same.Faces, 0, 1, 2)
	}
	return map[string]*geom.Tables{
		"one":       tables(t, one),
		"identical": tables(t, same),
		"grid":      tables(t, gridMesh(17, 2)),
		"cloud":     tables(t, cloudMesh(3000, 0.05, 11)),
		"mixed":     tables(t, gridMesh(5, 3), cloudMesh(700, 0.1, 12), one),
	}
}

// TestHostCompactExpandMatchesReference: the host mirror's compact records,
// expanded, are the CPU reference's intersect record bit for bit, for every
// flag combination, both layouts, with and without tmax and active.
func TestHostCompactExpandMatchesReference(t *testing.T) {
	for name, tb := range compactScenes(t) {
		sc, err := ref.NewScene(tb)
		require.NoError(t, err)
		for _, width := range []int{2, 4} {
			lay, err := BuildHost(tb, Options{Width: width})
			require.NoError(t, err)
			o, d, tmax, active := testRays(tb, 1031, 21)
			for _, masks := range []bool{false, true} {
				tm, act := tmax, active
				if !masks {
					tm, act = nil, nil
				}
				compact, err := lay.IntersectCompact(o, d, tm, act)
				require.NoError(t, err)
				hits, misses := checkCompactRecords(t, lay, compact)
				if hits == 0 || misses == 0 {
					t.Fatalf("%s: %d hits, %d misses: the rays must do both", name, hits, misses)
				}
				for _, flags := range allFlags() {
					label := fmt.Sprintf("%s width %d masks %v %v", name, width, masks, flags)
					want, err := sc.Intersect(o, d, tm, act, flags)
					require.NoError(t, err)
					got, err := lay.ExpandHits(o, d, compact, flags)
					require.NoError(t, err)
					requireSameHitBits(t, label, got, want)
				}
			}
		}
	}
}

// checkCompactRecords requires every record to be a well-formed hit (t
// finite, slot inside the layout) or the miss record, and counts both.
func checkCompactRecords(t testing.TB, lay *Layout, compact []uint32) (hits, misses int) {
	t.Helper()
	miss := Hit{Prim: -1}.Compact()
	for i := 0; i < len(compact); i += CompactWords {
		rec := [CompactWords]uint32(compact[i : i+CompactWords])
		if rec[3] == CompactMiss {
			if rec != miss {
				t.Fatalf("row %d: miss record %#x, want %#x", i/CompactWords, rec, miss)
			}
			misses++
			continue
		}
		if int(rec[3]) >= lay.NumTris || math.IsInf(float64(math.Float32frombits(rec[0])), 0) {
			t.Fatalf("row %d: hit record %#x outside the layout's %d triangles", i/CompactWords, rec, lay.NumTris)
		}
		hits++
	}
	return hits, misses
}

func TestHostExpandHitsChecksItsInput(t *testing.T) {
	tb := tables(t, gridMesh(3, 1))
	lay, err := BuildHost(tb, Options{})
	require.NoError(t, err)
	o, d := []float32{0, 0, -1, 0.1, 0.1, -1}, []float32{0, 0, 1, 0, 0, 1}
	compact, err := lay.IntersectCompact(o, d, nil, nil)
	require.NoError(t, err)
	_, err = lay.ExpandHits(o, d, compact[:4], geom.FlagsAll)
	assert.Error(t, err, "short compact")
	_, err = lay.ExpandHits(o, d[:3], compact, geom.FlagsAll)
	assert.Error(t, err, "short d")
	_, err = lay.ExpandHits(o, d, compact, geom.Flags(8))
	assert.Error(t, err, "unknown flag")
	_, err = lay.IntersectCompact(o, d, []float32{1}, nil)
	assert.Error(t, err, "short tmax")

	// A slot outside the layout is a miss, whatever the other words say.
	bad := append([]uint32(nil), compact...)
	bad[3] = uint32(lay.NumTris)
	got, err := lay.ExpandHits(o, d, bad, geom.FlagsAll)
	require.NoError(t, err)
	assert.True(t, math.IsInf(float64(got.T[0]), 1))
	assert.Equal(t, int32(-1), got.PrimID[0])
	assert.Equal(t, []float32{0, 0, 0}, got.P[:3])
	want, err := lay.ExpandHits(o, d, compact, geom.FlagsAll)
	require.NoError(t, err)
	assert.NotEqual(t, int32(-1), want.PrimID[0], "the unmodified row hits")
	assert.Equal(t, want.PrimID[1], got.PrimID[1], "other rows are untouched")
}

// TestCompactLaunchersCheckArguments: the argument checks of
// IntersectCompact and ExpandHits, before any launch (the length and
// alignment checks of the record need device buffers: TestGPUCompactChecks).
func TestCompactLaunchersCheckArguments(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleTrace: parseKernels(t, "trace.cu"),
	}}
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: 2}}
	empty := Rays{O: buf[float32](), D: buf[float32]()}
	hits := Hits{T: buf[float32]()}
	assert.ErrorContains(t, b.intersectCompact(rec, empty, nil), "IntersectCompact out is required")
	assert.ErrorContains(t, b.expandHits(rec, empty, nil, geom.FlagsAll, hits), "ExpandHits compact is required")
	assert.ErrorContains(t, b.expandHits(rec, empty, buf[uint32](), geom.Flags(8), hits), "flags")
	assert.ErrorContains(t, b.expandHits(rec, empty, buf[uint32](), geom.FlagsAll, Hits{}), "Hits.T")
	assert.ErrorContains(t, b.intersectCompact(rec, Rays{N: 1}, buf[uint32]()), "Rays.O and Rays.D are required")
	short := Rays{O: buf[float32](), D: buf[float32](), N: 10}
	assert.ErrorContains(t, b.intersectCompact(rec, short, buf[uint32]()), "Rays.O holds 0 elements, needs 30")
	assert.ErrorContains(t, b.expandHits(rec, short, buf[uint32](), geom.FlagsAll, hits), "Rays.O holds 0 elements, needs 30")
	// An empty batch launches nothing.
	require.NoError(t, b.intersectCompact(rec, empty, buf[uint32]()))
	require.NoError(t, b.expandHits(rec, empty, buf[uint32](), geom.FlagsAll, hits))
	assert.Empty(t, rec.seen)
}
