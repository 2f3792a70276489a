package ref

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// identityInstanced builds one identity instance per mesh over meshes and
// the mesh-only reference over the same tables.
func identityInstanced(t *testing.T, meshes []geom.Mesh) (*geom.Tables, *geom.Instances, *InstancedScene, *Scene) {
	t.Helper()
	in := make([]geom.Instance, len(meshes))
	for m := range meshes {
		in[m] = geom.Instance{Geometry: m, Transform: geom.Identity}
	}
	tb, x, s := instanced(t, meshes, in)
	plain, err := NewScene(tb)
	require.NoError(t, err)
	return tb, x, s, plain
}

// sameAsMeshScene compares an instanced record of identity instances with
// the mesh-only record: every field bit for bit except the normals (values:
// the identity's products may turn −0 into +0) and the instance ids (the
// mesh ids).
func sameAsMeshScene(t *testing.T, want, got *geom.Hits) {
	t.Helper()
	got = cloneHits(got)
	want = cloneHits(want)
	require.Equal(t, got.ShapeID, got.InstanceID, "instance i is mesh i")
	got.InstanceID = nil
	require.Equal(t, want.N, got.N)
	require.Equal(t, want.GeoN, got.GeoN)
	want.N, want.GeoN, got.N, got.GeoN = nil, nil, nil, nil
	require.True(t, sameHits(want, got), "first difference at row %d", firstDiff(want, got))
}

func cloneHits(h *geom.Hits) *geom.Hits {
	c := *h
	return &c
}

// Identity instances with per-ray tmin and masks and random mesh masks
// answer what the mesh-only scene answers with the same limits: tmin,
// the ray mask and the mesh masks mean the same on both.
func TestInstancedLimitsEqualMeshScene(t *testing.T) {
	r := newRand(t)
	meshes := []geom.Mesh{boxMesh([3]float32{0, 0, 0}, [3]float32{0.5, 0.4, 0.3}),
		sphereMesh([3]float32{0.6, 0.1, -0.2}, 0.35, 12, 9), soupMesh(r, 300, 1)}
	tb, _, s, plain := identityInstanced(t, meshes)
	for m, v := range testscene.RandomMeshMasks(r, len(meshes)) {
		require.NoError(t, tb.SetMask(m, v))
	}
	plain.ReloadMasks()
	o, d, tmax := randomRays(r, tb, 4000)
	tmin, mask := testscene.RandomLimits(r, 4000, tmax)
	ctx := context.Background()
	for _, lim := range []geom.RayLimits{{}, {TMin: tmin}, {Mask: mask}, {TMin: tmin, Mask: mask}} {
		want, err := plain.IntersectLimitsContext(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
		require.NoError(t, err)
		got, err := s.IntersectLimits(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
		require.NoError(t, err)
		sameAsMeshScene(t, want, got)
	}
}

// With the mesh masks at their default, the mask of identity instance i
// acts exactly as the mask of mesh i on the mesh-only scene.
func TestInstanceMaskActsAsMeshMask(t *testing.T) {
	r := newRand(t)
	meshes := []geom.Mesh{gridMesh(8, 1.5, 0), soupMesh(r, 300, 1), sphereMesh([3]float32{0, 0, 0.2}, 0.5, 12, 9)}
	tb, x, s, _ := identityInstanced(t, meshes)
	masks := testscene.RandomInstanceMasks(r, len(meshes))
	for i, v := range masks {
		require.NoError(t, x.SetMask(i, v))
	}
	masked, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	for m, v := range masks {
		require.NoError(t, masked.SetMask(m, v))
	}
	plain, err := NewScene(masked)
	require.NoError(t, err)
	o, d, tmax := randomRays(r, tb, 4000)
	_, mask := testscene.RandomLimits(r, 4000, tmax)
	ctx := context.Background()
	for _, lim := range []geom.RayLimits{{}, {Mask: mask}} {
		want, err := plain.IntersectLimitsContext(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
		require.NoError(t, err)
		got, err := s.IntersectLimits(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
		require.NoError(t, err)
		sameAsMeshScene(t, want, got)
	}
}

// Under random transforms an instance culled by its mask or its mesh's
// mask is exactly absent: each row answers what a scene of the instances
// its mask sees answers, with the instance ids mapped back; the BVH walk
// equals brute force.
func TestInstanceMasksCullExactly(t *testing.T) {
	r := newRand(t)
	meshes := []geom.Mesh{sphereMesh([3]float32{0, 0, 0}, 0.4, 10, 8), soupMesh(r, 150, 0.6), gridMesh(4, 1, 0)}
	in := testscene.RandomInstances(r, len(meshes), 30, 1)
	in = append(in, in[3], in[3]) // coincident copies: ties go to the lowest visible id
	instMasks := testscene.RandomInstanceMasks(r, len(in))
	instMasks[3] = 0x02
	meshMasks := []uint8{0xFF, 0x05, 0x03}
	tb, x, s := instanced(t, meshes, in)
	for i, v := range instMasks {
		require.NoError(t, x.SetMask(i, v))
	}
	for m, v := range meshMasks {
		require.NoError(t, tb.SetMask(m, v))
	}
	brute, err := NewInstancedScene(context.Background(), tb, x, BruteForce())
	require.NoError(t, err)
	o, d, tmax := randomRays(r, tb, 3000)
	tmin, _ := testscene.RandomLimits(r, 3000, tmax)
	ctx := context.Background()
	hits := 0
	for _, rm := range []uint8{0x01, 0x02, 0x04, 0xFF, 0x00} {
		mask := make([]uint8, len(tmax))
		for i := range mask {
			mask[i] = rm
		}
		lim := geom.RayLimits{TMin: tmin, Mask: mask}
		got, err := s.IntersectLimits(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
		require.NoError(t, err)
		b, err := brute.IntersectLimits(ctx, o, d, tmax, nil, lim, geom.FlagsAll)
		require.NoError(t, err)
		require.True(t, sameHits(got, b), "mask %#x: BVH and brute force differ at row %d", rm, firstDiff(got, b))

		// The instances mask rm sees, alone (default masks), give the same record.
		var sub []geom.Instance
		var ids []int32
		for i, v := range instMasks {
			if v&rm != 0 && meshMasks[in[i].Geometry]&rm != 0 {
				sub, ids = append(sub, in[i]), append(ids, int32(i))
			}
		}
		if len(sub) == 0 {
			for i := range got.Len() {
				require.False(t, got.Valid(i), "mask %#x sees no instance", rm)
			}
			continue
		}
		plainTables, err := geom.BuildTables(meshes)
		require.NoError(t, err)
		sx, err := geom.BuildInstances(plainTables, sub)
		require.NoError(t, err)
		only, err := NewInstancedScene(ctx, plainTables, sx)
		require.NoError(t, err)
		want, err := only.IntersectLimits(ctx, o, d, tmax, nil, geom.RayLimits{TMin: tmin}, geom.FlagsAll)
		require.NoError(t, err)
		for i, id := range want.InstanceID {
			if id >= 0 {
				want.InstanceID[i] = ids[id]
				hits++
			}
		}
		require.True(t, sameHits(want, got), "mask %#x: first difference at row %d", rm, firstDiff(want, got))
	}
	require.Greater(t, hits, 300, "the rays must hit often enough to test something")
}

// tmin bounds the interval from below, inclusively, on the world t; a
// later mask change of the tables or of an instance is seen by the next
// query, and setting the masks back restores the first answer.
func TestInstancedTMinAndMaskUpdates(t *testing.T) {
	ctx := context.Background()
	// Two unit grids, at z = 0 and (second instance) z = 1.
	tb, x, s := instanced(t, []geom.Mesh{gridMesh(2, 1, 0)}, []geom.Instance{
		{Geometry: 0, Transform: geom.Identity}, {Geometry: 0, Transform: testscene.Translation(0, 0, 1)}})
	o, d := []float32{0.3, 0.3, 3}, []float32{0, 0, -1}
	query := func(tmin float32, mask uint8) (float32, int32) {
		t.Helper()
		h, err := s.IntersectLimits(ctx, o, d, nil, nil, geom.RayLimits{TMin: []float32{tmin}, Mask: []uint8{mask}}, geom.FlagsAll)
		require.NoError(t, err)
		return h.T[0], h.InstanceID[0]
	}
	pair := func(tt float32, id int32) [2]any { return [2]any{tt, id} }
	require.Equal(t, pair(2, 1), pair(query(0, 0xFF)))
	require.Equal(t, pair(2, 1), pair(query(2, 0xFF)), "tmin is inclusive")
	require.Equal(t, pair(3, 0), pair(query(2.5, 0xFF)), "tmin cuts the nearer instance off")
	_, id := query(3.5, 0xFF)
	require.Equal(t, int32(-1), id, "tmin beyond every hit")

	require.NoError(t, x.SetMask(1, 0x02))
	require.Equal(t, pair(3, 0), pair(query(0, 0x01)), "the ray mask does not see instance 1")
	require.Equal(t, pair(2, 1), pair(query(0, 0x02)))
	require.NoError(t, tb.SetMask(0, 0x01))
	_, id = query(0, 0x02)
	require.Equal(t, int32(-1), id, "mesh mask 0x01 hides both instances from mask 0x02")
	require.Equal(t, pair(3, 0), pair(query(0, 0x01)))
	require.NoError(t, tb.SetMask(0, geom.DefaultMask))
	require.NoError(t, x.SetMask(1, geom.DefaultMask))
	require.Equal(t, pair(2, 1), pair(query(0, 0x01)), "default masks restore the first answer")

	_, err := s.IntersectLimits(ctx, o, d, []float32{1}, nil, geom.RayLimits{TMin: []float32{2}}, geom.FlagsAll)
	require.ErrorIs(t, err, geom.ErrInvalidArgument, "tmin above tmax")
	_, err = s.IntersectLimits(ctx, o, d, nil, nil, geom.RayLimits{Mask: []uint8{1, 2}}, geom.FlagsAll)
	require.ErrorIs(t, err, ErrLength)
}

// A geometry built with a mesh mask follows the tables' later value: the
// instance level reads the tables, the geometry filters nothing itself.
func TestInstancedMeshMaskFollowsTables(t *testing.T) {
	g := gridMesh(2, 1, 0)
	g.Mask = geom.Mask(0)
	tb, _, s := instanced(t, []geom.Mesh{g}, []geom.Instance{{Geometry: 0, Transform: geom.Identity}})
	o, d := [3]float32{0.3, 0.3, 1}, [3]float32{0, 0, -1}
	_, ok := s.Closest(o, d, geom.TMin, geom.DefaultTMax)
	require.False(t, ok, "mesh mask 0 hides the geometry")
	require.NoError(t, tb.SetMask(0, 0x10))
	h, ok := s.ClosestMasked(o, d, geom.TMin, geom.DefaultTMax, 0x30)
	require.True(t, ok)
	require.Equal(t, float32(1), h.T)
	_, ok = s.ClosestMasked(o, d, geom.TMin, geom.DefaultTMax, 0x01)
	require.False(t, ok)
}
