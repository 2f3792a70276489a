package ref

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// TestCrossingsMeshMasks: under mesh masks (one mesh of mask 0) the BVH
// walk equals brute force bit for bit, and every row is the unmasked row
// with the hits on mask-0 meshes removed: segments carry the full ray mask,
// so any nonzero mesh mask counts.
func TestCrossingsMeshMasks(t *testing.T) {
	r := newRand(t)
	bv, bf := scenes(t, sphereMesh([3]float32{}, .8, 14, 7), soupMesh(r, 400, .3), gridMesh(5, 3, -.5))
	tb := bv.Tables()
	start, end := testscene.RandomSegments(r, tb, 3000)
	k := geom.MaxCrossingsK
	all, err := bv.Crossings(start, end, nil, k)
	require.NoError(t, err)

	masks := []uint8{0x01, 0x00, 0x04}
	for m, v := range masks {
		require.NoError(t, tb.SetMask(m, v))
	}
	bv.ReloadMasks()
	bf.ReloadMasks()
	for _, kk := range []int{1, 5, k} {
		a, err := bv.Crossings(start, end, nil, kk)
		require.NoError(t, err)
		b, err := bf.Crossings(start, end, nil, kk)
		require.NoError(t, err)
		require.Equal(t, -1, testscene.CrossingsDiff(a, b), "k=%d", kk)
	}
	got, err := bv.Crossings(start, end, nil, k)
	require.NoError(t, err)
	removed := 0
	for i := range got.Rows() {
		require.False(t, all.Overflow[i], "row %d: the fixture keeps every hit at k=64", i)
		j := 0
		for x := range int(all.Count[i]) {
			s := i*k + x
			if masks[all.Shape[s]] == 0 {
				removed++
				continue
			}
			y := i*k + j
			require.Equal(t, math.Float32bits(all.T[s]), math.Float32bits(got.T[y]), "row %d slot %d", i, j)
			require.Equal(t, all.Prim[s], got.Prim[y], "row %d slot %d", i, j)
			require.Equal(t, all.Shape[s], got.Shape[y], "row %d slot %d", i, j)
			j++
		}
		require.Equal(t, int32(j), got.Count[i], "row %d", i)
		for ; j < k; j++ {
			require.Equal(t, int32(-1), got.Prim[i*k+j], "row %d slot %d: miss", i, j)
		}
	}
	require.Positive(t, removed, "the segments must cross the hidden mesh")

	for m := range masks {
		require.NoError(t, tb.SetMask(m, geom.DefaultMask))
	}
	bv.ReloadMasks()
	back, err := bv.Crossings(start, end, nil, k)
	require.NoError(t, err)
	require.Equal(t, -1, testscene.CrossingsDiff(all, back), "default masks give the unmasked record")
}
