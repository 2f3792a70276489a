package ref

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

func instanced(t *testing.T, meshes []geom.Mesh, in []geom.Instance, opts ...Option) (*geom.Tables, *geom.Instances, *InstancedScene) {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	s, err := NewInstancedScene(context.Background(), tb, x, opts...)
	require.NoError(t, err)
	return tb, x, s
}

// One identity instance per mesh is the mesh scene itself: every field is
// bit for bit the mesh-only reference's, and the instance id is the mesh.
func TestInstancedIdentityEqualsMeshScene(t *testing.T) {
	r := newRand(t)
	meshes := []geom.Mesh{boxMesh([3]float32{0, 0, 0}, [3]float32{0.5, 0.4, 0.3}),
		sphereMesh([3]float32{0.6, 0.1, -0.2}, 0.35, 12, 9), soupMesh(r, 200, 1)}
	var in []geom.Instance
	for m := range meshes {
		in = append(in, geom.Instance{Geometry: m, Transform: geom.Identity})
	}
	tb, _, s := instanced(t, meshes, in)
	plain, err := NewScene(tb)
	require.NoError(t, err)
	o, d, tmax := randomRays(r, tb, 3000)
	want, err := plain.Intersect(o, d, tmax, nil, geom.FlagsAll)
	require.NoError(t, err)
	got, err := s.Intersect(context.Background(), o, d, tmax, nil, geom.FlagsAll)
	require.NoError(t, err)
	require.Len(t, got.InstanceID, len(o)/3)
	require.Equal(t, got.ShapeID, got.InstanceID, "instance i is mesh i")
	got.InstanceID = nil
	require.Equal(t, -1, firstDiff(want, got))
	// The normals agree as values: the identity's zero products may turn
	// a −0 component into +0. Every other field agrees bit for bit.
	require.Equal(t, want.N, got.N)
	require.Equal(t, want.GeoN, got.GeoN)
	want.N, want.GeoN, got.N, got.GeoN = nil, nil, nil, nil
	require.True(t, sameHits(want, got))
}

// The BVH walk of every geometry returns exactly the brute-force answer
// under random affine transforms, shared geometries and overlapping
// instances (ties between instances go to the lowest id).
func TestInstancedBVHEqualsBruteForce(t *testing.T) {
	r := newRand(t)
	meshes := []geom.Mesh{sphereMesh([3]float32{0, 0, 0}, 0.4, 10, 8), soupMesh(r, 150, 0.6), gridMesh(4, 1, 0)}
	in := testscene.RandomInstances(r, len(meshes), 24, 1)
	// Two coincident copies: equal t everywhere, the lower id must win.
	in = append(in, in[3], in[3])
	tb, x, s := instanced(t, meshes, in)
	brute, err := NewInstancedScene(context.Background(), tb, x, BruteForce())
	require.NoError(t, err)
	o, d, tmax := randomRays(r, tb, 4000)
	ctx := context.Background()
	a, err := s.Intersect(ctx, o, d, tmax, nil, geom.FlagsAll)
	require.NoError(t, err)
	b, err := brute.Intersect(ctx, o, d, tmax, nil, geom.FlagsAll)
	require.NoError(t, err)
	require.True(t, sameHits(a, b), "first difference at row %d", firstDiff(a, b))
	hits, dup := 0, 0
	for i := range a.Len() {
		if a.Valid(i) {
			hits++
			require.NotEqual(t, int32(len(in)-1), a.InstanceID[i], "a coincident later copy never wins")
			if a.InstanceID[i] == 3 {
				dup++
			}
		}
	}
	require.Greater(t, hits, 200, "the rays must hit often enough to test something")
	require.Positive(t, dup)
}

// A hit of an instance lies on the world image of its object triangle:
// the reported point, mapped through the transform in float64, is within
// float32 rounding of the face's plane and the world normal is
// perpendicular to the world edges.
func TestInstancedHitsLieOnWorldTriangles(t *testing.T) {
	r := newRand(t)
	meshes := []geom.Mesh{soupMesh(r, 80, 0.8)}
	in := testscene.RandomInstances(r, 1, 6, 0.5)
	tb, x, s := instanced(t, meshes, in)
	o, d, tmax := randomRays(r, tb, 2000)
	h, err := s.Intersect(context.Background(), o, d, tmax, nil, geom.FlagsAll)
	require.NoError(t, err)
	checked := 0
	for i := range h.Len() {
		if !h.Valid(i) {
			continue
		}
		rec := &x.Records[h.InstanceID[i]]
		p0, p1, p2 := tb.Triangle(int(h.PrimID[i]))
		w := [3][3]float64{}
		for k, p := range [3][3]float32{p0, p1, p2} {
			w[k] = rec.Transform.Apply([3]float64{float64(p[0]), float64(p[1]), float64(p[2])})
		}
		b := h.Bary[3*i : 3*i+3]
		n := h.GeoN[3*i : 3*i+3]
		for k := range 3 {
			want := float64(b[0])*w[0][k] + float64(b[1])*w[1][k] + float64(b[2])*w[2][k]
			require.InDelta(t, want, float64(h.P[3*i+k]), 1e-4, "row %d: hit point", i)
		}
		for _, e := range [][3]float64{{w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]},
			{w[2][0] - w[0][0], w[2][1] - w[0][1], w[2][2] - w[0][2]}} {
			le := math.Sqrt(e[0]*e[0] + e[1]*e[1] + e[2]*e[2])
			dot := (e[0]*float64(n[0]) + e[1]*float64(n[1]) + e[2]*float64(n[2])) / le
			require.InDelta(t, 0, dot, 1e-5, "row %d: world normal ⟂ world edge", i)
		}
		nl := math.Sqrt(float64(n[0]*n[0] + n[1]*n[1] + n[2]*n[2]))
		require.InDelta(t, 1, nl, 1e-6)
		checked++
	}
	require.Greater(t, checked, 50)
}

// A translation moves the hits: the same ray shifted with the instance
// hits at the same t, and the next query sees SetTransforms.
func TestInstancedTranslationAndUpdate(t *testing.T) {
	meshes := []geom.Mesh{gridMesh(2, 2, 0)}
	_, x, s := instanced(t, meshes, []geom.Instance{{Geometry: 0, Transform: geom.Identity}})
	o, d := [3]float32{0.25, 0.25, 3}, [3]float32{0, 0, -1}
	h, ok := s.Closest(o, d, geom.TMin, geom.DefaultTMax)
	require.True(t, ok)
	require.Equal(t, float32(3), h.T)
	require.NoError(t, x.SetTransforms(0, []geom.Transform{testscene.Translation(5, 0, 1)}))
	_, ok = s.Closest(o, d, geom.TMin, geom.DefaultTMax)
	require.False(t, ok, "the grid moved away")
	h, ok = s.Closest([3]float32{5.25, 0.25, 3}, d, geom.TMin, geom.DefaultTMax)
	require.True(t, ok)
	require.Equal(t, float32(2), h.T)
	require.Equal(t, int32(0), h.Instance)
}

func TestInstancedSceneErrors(t *testing.T) {
	tb, err := geom.BuildTables([]geom.Mesh{gridMesh(2, 1, 0)})
	require.NoError(t, err)
	_, err = NewInstancedScene(context.Background(), tb, nil)
	require.ErrorIs(t, err, geom.ErrNoInstances)
	x, err := geom.BuildInstances(tb, []geom.Instance{{Geometry: 0, Transform: geom.Identity}})
	require.NoError(t, err)
	s, err := NewInstancedScene(context.Background(), tb, x)
	require.NoError(t, err)
	_, err = s.Intersect(context.Background(), []float32{0, 0}, nil, nil, nil, geom.FlagsAll)
	require.ErrorIs(t, err, ErrLength)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Intersect(ctx, []float32{0, 0, 1}, []float32{0, 0, -1}, nil, nil, geom.FlagsAll)
	require.ErrorIs(t, err, context.Canceled)
}
