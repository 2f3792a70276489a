package ref

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// TestCrossingsBVHMatchesBruteForce: the BVH walk and brute force give the
// same record bit for bit, for several k.
func TestCrossingsBVHMatchesBruteForce(t *testing.T) {
	r := newRand(t)
	bv, bf := scenes(t, sphereMesh([3]float32{}, .8, 14, 7), soupMesh(r, 400, .3), gridMesh(5, 3, -.5))
	start, end := testscene.RandomSegments(r, bv.Tables(), 3000)
	overflowed := 0
	for _, k := range []int{1, 3, 8, geom.MaxCrossingsK} {
		a, err := bv.Crossings(start, end, nil, k)
		require.NoError(t, err)
		b, err := bf.Crossings(start, end, nil, k)
		require.NoError(t, err)
		require.Equal(t, -1, testscene.CrossingsDiff(a, b), "k=%d", k)
		for _, o := range a.Overflow {
			if o {
				overflowed++
			}
		}
	}
	require.Positive(t, overflowed, "the segments must overflow small k somewhere")
}

// TestCrossingsRowInvariants: kept hits are sorted by (t, prim), number
// min(count, k), are a prefix of a larger k's, match the shape table, the
// count is 0 exactly on visible rows, and the first kept hit is the
// segment's closest blocker.
func TestCrossingsRowInvariants(t *testing.T) {
	r := newRand(t)
	s, _ := scenes(t, soupMesh(r, 600, .4), boxMesh([3]float32{.2, 0, 0}, [3]float32{.5, .5, .5}))
	start, end := testscene.RandomSegments(r, s.Tables(), 2000)
	all, err := s.Crossings(start, end, nil, geom.MaxCrossingsK)
	require.NoError(t, err)
	few, err := s.Crossings(start, end, nil, 4)
	require.NoError(t, err)
	vis, err := s.Visible(start, end, nil)
	require.NoError(t, err)
	blk, err := s.SegmentBlockers(start, end, nil, nil, 0)
	require.NoError(t, err)
	hits := 0
	for i := range few.Rows() {
		n := int(all.Count[i])
		hits += n
		require.Equal(t, all.Count[i], few.Count[i], "row %d", i)
		require.Equal(t, n > 4, few.Overflow[i], "row %d", i)
		require.Equal(t, n == 0, vis[i], "row %d: count %d, visible %v", i, n, vis[i])
		require.Less(t, n, geom.MaxCrossingsK, "row %d: the fixture keeps every hit at k=64", i)
		if n > 0 {
			require.Equal(t, blk[i], all.Prim[i*geom.MaxCrossingsK], "row %d: first hit is the closest blocker", i)
		}
		for j := range geom.MaxCrossingsK {
			x := i*geom.MaxCrossingsK + j
			if j >= n {
				require.True(t, math.IsInf(float64(all.T[x]), 1) && all.Prim[x] == -1 && all.Shape[x] == -1, "row %d slot %d: miss", i, j)
				continue
			}
			require.Equal(t, s.Tables().FaceShape[all.Prim[x]], all.Shape[x])
			require.True(t, all.T[x] >= geom.MultipathTMin)
			if j > 0 {
				require.True(t, geom.CrossingLess(all.T[x-1], all.Prim[x-1], all.T[x], all.Prim[x]), "row %d slot %d: order", i, j)
			}
			if j < 4 {
				y := i*4 + j
				require.Equal(t, math.Float32bits(all.T[x]), math.Float32bits(few.T[y]))
				require.Equal(t, all.Prim[x], few.Prim[y])
				require.Equal(t, all.Shape[x], few.Shape[y])
			}
		}
	}
	require.Greater(t, hits, 2000, "the fixture must produce hits")
}

// TestCrossingsPlanes: a segment through two stacked quads (meshes 0 and 1)
// crosses the ceiling, then the floor; rows that cannot hit give the miss
// record.
func TestCrossingsPlanes(t *testing.T) {
	floor := quadMesh([3]float32{-2, -2, 0}, [3]float32{4, 0, 0}, [3]float32{0, 4, 0})
	ceiling := quadMesh([3]float32{-2, -2, 1}, [3]float32{4, 0, 0}, [3]float32{0, 4, 0})
	nan := float32(math.NaN())
	start := []float32{.3, .2, 2, .3, .2, 2, 0, 0, .5, 0, 0, -5e-6, nan, 0, 0, .3, .2, 2}
	end := []float32{.3, .2, -1, .3, .2, -1, .1, .1, .6, 0, 0, 5e-6, 0, 0, -1, .3, .2, 0}
	active := []bool{true, false, true, true, true, true}
	for _, s := range both(t, floor, ceiling) {
		c, err := s.Crossings(start, end, active, 1)
		require.NoError(t, err)
		require.Equal(t, []int32{2, 0, 0, 0, 0, 1}, c.Count)
		require.Equal(t, []bool{true, false, false, false, false, false}, c.Overflow)
		require.Equal(t, int32(1), c.Shape[0], "ceiling first")
		require.Equal(t, int32(1), c.Shape[5], "the end at the floor is shrunk: only the ceiling")
		c2, err := s.Crossings(start, end, active, 2)
		require.NoError(t, err)
		require.Equal(t, []int32{1, 0}, c2.Shape[0:2])
		require.InDelta(t, 1-geom.MultipathBias, c2.T[0], 1e-6, "t is measured from the biased origin")
		require.InDelta(t, 2-geom.MultipathBias, c2.T[1], 1e-6)
		require.True(t, c2.T[0] < c2.T[1])
		for _, i := range []int{1, 2, 3, 4} {
			require.True(t, math.IsInf(float64(c2.T[2*i]), 1) && c2.Prim[2*i] == -1 && c2.Shape[2*i] == -1)
		}
	}
}

func TestCrossingsErrors(t *testing.T) {
	s, _ := scenes(t, boxMesh([3]float32{}, [3]float32{1, 1, 1}))
	p := []float32{0, 0, 0}
	for _, k := range []int{0, -1, geom.MaxCrossingsK + 1} {
		_, err := s.Crossings(p, p, nil, k)
		require.ErrorIs(t, err, ErrInvalidArgument, "k=%d", k)
	}
	_, err := s.Crossings(p, p[:2], nil, 1)
	require.ErrorIs(t, err, ErrLength)
	_, err = s.Crossings(p, p, []bool{true, true}, 1)
	require.ErrorIs(t, err, ErrLength)
	c, err := s.Crossings(nil, nil, nil, 5)
	require.NoError(t, err)
	require.Zero(t, c.Rows())
	require.Empty(t, c.T)
	require.Equal(t, 5, c.K)
	err = geom.CheckCrossingsK(geom.MaxCrossingsK)
	require.NoError(t, err)
	_, err = geom.CheckCrossings(nil, nil, nil, 1, 1)
	require.NoError(t, err)
	big := make([]float32, 3*1000)
	_, err = geom.CheckCrossings(big, big, nil, geom.MaxCrossingsK, 1000)
	require.ErrorIs(t, err, geom.ErrTooLarge)
}

func TestCrossingsCancelled(t *testing.T) {
	r := newRand(t)
	s, _ := scenes(t, soupMesh(r, 200, .2))
	start, end := testscene.RandomSegments(r, s.Tables(), 100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := s.CrossingsContext(ctx, start, end, nil, 4)
	require.Nil(t, c)
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
}
