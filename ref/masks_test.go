package ref

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// maskedScenes builds a BVH and a brute-force scene over three meshes with
// random visibility masks.
func maskedScenes(t *testing.T) (bvhScene, brute *Scene, masks []uint8) {
	t.Helper()
	r := newRand(t)
	bvhScene, brute = scenes(t, boxMesh([3]float32{0, 0, 0}, [3]float32{0.5, 0.7, 0.3}),
		soupMesh(r, 800, 0.2), gridMesh(12, 2, -0.4))
	masks = testscene.RandomMeshMasks(r, 3)
	tb := bvhScene.Tables()
	for m, v := range masks {
		require.NoError(t, tb.SetMask(m, v))
	}
	bvhScene.ReloadMasks()
	brute.ReloadMasks()
	return bvhScene, brute, masks
}

// The BVH answers masked and tmin-bounded queries exactly like brute force.
func TestLimitsBVHEqualsBruteForce(t *testing.T) {
	bvhScene, brute, _ := maskedScenes(t)
	r := newRand(t)
	tb := bvhScene.Tables()
	o, d, tmax := randomRays(r, tb, 4000)
	tmin, mask := testscene.RandomLimits(r, 4000, tmax)
	lim := geom.RayLimits{TMin: tmin, Mask: mask}
	ctx := context.Background()
	a, err := bvhScene.IntersectLimitsContext(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
	require.NoError(t, err)
	b, err := brute.IntersectLimitsContext(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
	require.NoError(t, err)
	require.True(t, sameHits(a, b), "first difference at row %d", firstDiff(a, b))
	ra, err := bvhScene.TraceReflectionsLimitsContext(ctx, o, d, tmax, nil, lim, 3)
	require.NoError(t, err)
	rb, err := brute.TraceReflectionsLimitsContext(ctx, o, d, tmax, nil, lim, 3)
	require.NoError(t, err)
	require.True(t, sameReflections(ra, rb))
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]
	}
	va, err := bvhScene.Visible(o, end, nil)
	require.NoError(t, err)
	vb, err := brute.Visible(o, end, nil)
	require.NoError(t, err)
	require.Equal(t, vb, va)
}

// Every hit respects its row's limits, and rows whose limits exclude
// nothing answer as without limits.
func TestLimitsAreHonoured(t *testing.T) {
	bvhScene, _, _ := maskedScenes(t)
	r := newRand(t)
	tb := bvhScene.Tables()
	o, d, tmax := randomRays(r, tb, 3000)
	tmin, mask := testscene.RandomLimits(r, 3000, tmax)
	h, err := bvhScene.IntersectLimitsContext(context.Background(), o, d, tmax, nil, geom.RayLimits{TMin: tmin, Mask: mask}, geom.FlagsAll)
	require.NoError(t, err)
	hits := 0
	for i := range h.Len() {
		if h.PrimID[i] < 0 {
			continue
		}
		hits++
		assert.GreaterOrEqual(t, h.T[i], tmin[i], "row %d", i)
		assert.NotZero(t, tb.MaskOf(int(h.ShapeID[i]))&mask[i], "row %d hit mesh %d", i, h.ShapeID[i])
	}
	require.Positive(t, hits)
}

// Limits equal to the defaults (tmin = the contract's epsilon, mask 0xFF)
// and default mesh masks give today's records bit for bit.
func TestDefaultLimitsKeepTodaysAnswers(t *testing.T) {
	r := newRand(t)
	sc, _ := scenes(t, sphereMesh([3]float32{0, 0, 0}, 0.6, 20, 10), soupMesh(r, 500, 0.2))
	o, d, tmax := randomRays(r, sc.Tables(), 3000)
	n := len(tmax)
	def := geom.RayLimits{TMin: fill(n, geom.TMin), Mask: fillMask(n, 0xFF)}
	want, err := sc.Intersect(o, d, tmax, nil, geom.FlagsAll)
	require.NoError(t, err)
	got, err := sc.IntersectLimitsContext(context.Background(), o, d, tmax, nil, def, geom.FlagsAll)
	require.NoError(t, err)
	require.True(t, sameHits(got, want), "row %d", firstDiff(got, want))
	// An explicit tmin above tmax is refused, so rows with tmax below the
	// multipath tmin (which the default answers as misses) are raised to it.
	for i := range tmax {
		tmax[i] = max(tmax[i], geom.MultipathTMin)
	}
	wantR, err := sc.TraceReflections(o, d, tmax, nil, 2)
	require.NoError(t, err)
	def.TMin = fill(n, geom.MultipathTMin)
	gotR, err := sc.TraceReflectionsLimitsContext(context.Background(), o, d, tmax, nil, def, 2)
	require.NoError(t, err)
	require.True(t, sameReflections(gotR, wantR))
}

// A mesh of mask 0 is invisible to every query; a ray mask selects meshes.
func TestMeshMaskHidesAndSelects(t *testing.T) {
	tri := func(z float32) geom.Mesh {
		return geom.Mesh{Vertices: []float32{-1, -1, z, 1, -1, z, 0, 1, z}, Faces: []int32{0, 1, 2}}
	}
	near, far := tri(1), tri(2)
	near.Mask = geom.Mask(0x01)
	far.Mask = geom.Mask(0x02)
	tb, err := geom.BuildTables([]geom.Mesh{near, far})
	require.NoError(t, err)
	sc, err := NewScene(tb)
	require.NoError(t, err)
	o, d := []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []float32{0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1}
	lim := geom.RayLimits{Mask: []uint8{0xFF, 0x02, 0x04, 0x01}, TMin: []float32{0, 0, 0, 1.5}}
	h, err := sc.IntersectLimitsContext(context.Background(), o, d, nil, nil, lim, geom.FlagsAll)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, float32(math.Inf(1)), float32(math.Inf(1))}, h.T)
	assert.Equal(t, []int32{0, 1, -1, -1}, h.ShapeID)

	require.NoError(t, tb.SetMask(0, 0))
	sc.ReloadMasks()
	vis, err := sc.Visible([]float32{0, 0, 0}, []float32{0, 0, 1.5}, nil)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, vis, "a mesh of mask 0 never blocks")
	hit, ok := sc.Closest([3]float32{0, 0, 0}, [3]float32{0, 0, 1}, 0, 10)
	require.True(t, ok)
	assert.Equal(t, int32(1), hit.Prim, "Closest skips the hidden mesh")
	assert.False(t, sc.AnyHit([3]float32{0, 0, 0}, [3]float32{0, 0, 1}, 0, 1.5))
}

// Bad limits are typed errors.
func TestLimitsErrors(t *testing.T) {
	sc, _ := scenes(t, gridMesh(4, 2, 0))
	o, d := []float32{0, 0, 1, 0, 0, 1}, []float32{0, 0, -1, 0, 0, -1}
	ctx := context.Background()
	for name, c := range map[string]struct {
		tmax []float32
		lim  geom.RayLimits
		want error
	}{
		"tmin length":   {nil, geom.RayLimits{TMin: []float32{0}}, geom.ErrLength},
		"mask length":   {nil, geom.RayLimits{Mask: []uint8{1, 2, 3}}, geom.ErrLength},
		"tmin NaN":      {nil, geom.RayLimits{TMin: []float32{0, float32(math.NaN())}}, geom.ErrInvalidArgument},
		"tmin Inf":      {nil, geom.RayLimits{TMin: []float32{float32(math.Inf(1)), 0}}, geom.ErrInvalidArgument},
		"tmin negative": {nil, geom.RayLimits{TMin: []float32{-1, 0}}, geom.ErrInvalidArgument},
		"tmin > tmax":   {[]float32{1, 1}, geom.RayLimits{TMin: []float32{0.5, 2}}, geom.ErrInvalidArgument},
	} {
		_, err := sc.IntersectLimitsContext(ctx, o, d, c.tmax, nil, c.lim, geom.FlagsAll)
		assert.True(t, errors.Is(err, c.want), "%s intersect: %v", name, err)
		_, err = sc.TraceReflectionsLimitsContext(ctx, o, d, c.tmax, nil, c.lim, 1)
		assert.True(t, errors.Is(err, c.want), "%s reflections: %v", name, err)
	}
	var ae *geom.ArgumentError
	_, err := sc.IntersectLimitsContext(ctx, o, d, []float32{1, 1}, nil, geom.RayLimits{TMin: []float32{0, 3}}, geom.FlagsNone)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "tmin[1]", ae.Field)
}

func fill(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func fillMask(n int, v uint8) []uint8 {
	out := make([]uint8, n)
	for i := range out {
		out[i] = v
	}
	return out
}
