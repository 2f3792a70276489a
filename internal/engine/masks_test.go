package engine_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/ref"
)

// maskedTables is two meshes, the second with a visibility mask.
func maskedTables(t *testing.T) *geom.Tables {
	t.Helper()
	grid := workload.GridMesh(6, 2)
	soup := testscene.Soup(rand.New(rand.NewPCG(3, 4)), 300, 0.3)
	soup.Mask = geom.Mask(0x02)
	tb, err := geom.BuildTables([]geom.Mesh{grid, soup})
	require.NoError(t, err)
	return tb
}

// Every engine answers masked, tmin-bounded intersect and trace_reflections
// and masked visible bitwise like the brute-force reference, follows
// SetMeshMask, and refuses (ErrUnsupported) rather than ignores masks where
// its kernels have none.
func TestEveryEngineHonoursOrRefusesMasks(t *testing.T) {
	ctx := context.Background()
	tb := maskedTables(t)
	r := rand.New(rand.NewPCG(5, 6))
	o, d, tmax := testscene.RandomRays(r, tb, 2000)
	tmin, mask := testscene.RandomLimits(r, 2000, tmax)
	rays := engine.Rays{Origins: o, Directions: d, TMax: tmax, TMin: tmin, Mask: mask}
	for name, e := range engines(t, tb) {
		for _, step := range []uint8{0x02, 0x05} {
			want, err := ref.NewScene(tb, ref.BruteForce())
			require.NoError(t, err)
			h, err := e.Intersect(ctx, rays, geom.FlagsAll)
			require.NoError(t, err, name)
			wh, err := want.IntersectLimitsContext(ctx, o, d, tmax, nil, rays.Limits(), geom.FlagsAll)
			require.NoError(t, err)
			require.True(t, testscene.SameHits(h, wh), "%s intersect (mask %#x): row %d", name, step, testscene.FirstDiff(h, wh))
			rf, err := e.TraceReflections(ctx, rays, 2)
			require.NoError(t, err, name)
			wr, err := want.TraceReflectionsLimitsContext(ctx, o, d, tmax, nil, rays.Limits(), 2)
			require.NoError(t, err)
			require.True(t, testscene.SameReflections(rf, wr), "%s trace_reflections", name)
			v, err := e.Visible(ctx, o, d, nil)
			require.NoError(t, err, name)
			wv, err := want.Visible(o, d, nil)
			require.NoError(t, err)
			require.Equal(t, wv, v, "%s visible", name)
			pair, err := geom.PairSegments(o[:30], d[:30], d[:30], nil, nil)
			require.NoError(t, err)
			gp, err := e.VisiblePair(ctx, pair)
			require.NoError(t, err, name)
			blk, err := pair.Query(want.SegmentBlockers, 0, pair.Rows)
			require.NoError(t, err)
			wp, err := geom.PairFinish(pair, 0, pair.Rows, blk)
			require.NoError(t, err)
			require.Equal(t, wp, gp, "%s visible_pair (mask %#x)", name, step)
			require.NoError(t, tb.SetMask(1, step^0x07))
			require.NoError(t, e.SetMeshMask(ctx, 1, step^0x07), name)
		}
		// Back to the default for the next engine.
		require.NoError(t, tb.SetMask(1, 0x02))
		require.NoError(t, e.SetMeshMask(ctx, 1, 0x02), name)
	}
}
