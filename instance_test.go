package rayd_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

func instancedCPU(t *testing.T, meshes []rayd.Mesh, in []rayd.Instance) *rayd.Scene {
	t.Helper()
	s, err := rayd.NewScene(context.Background(), meshes, rayd.WithBackend(rayd.BackendCPU), rayd.WithInstances(in))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The façade answers exactly what the reference's instanced scene does,
// and follows transform updates.
func TestInstancedSceneMatchesReference(t *testing.T) {
	r := testscene.Rand(t)
	meshes := []rayd.Mesh{testscene.Sphere([3]float32{0, 0, 0}, 0.4, 10, 8), testscene.Soup(r, 120, 0.6)}
	in := testscene.RandomInstances(r, len(meshes), 12, 1)
	s := instancedCPU(t, meshes, in)
	require.Equal(t, 12, s.NumInstances())
	require.Equal(t, rayd.BackendCPU, s.Backend())

	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	want, err := ref.NewInstancedScene(context.Background(), tb, x, ref.BruteForce())
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(r, tb, 2000)
	check := func() {
		t.Helper()
		a, err := s.Intersect(context.Background(), rayd.Rays{Origins: o, Directions: d, TMax: tmax}, rayd.FlagsAll)
		require.NoError(t, err)
		b, err := want.Intersect(context.Background(), o, d, tmax, nil, rayd.FlagsAll)
		require.NoError(t, err)
		require.True(t, testscene.SameHits(a, b), "first difference at row %d", testscene.FirstDiff(a, b))
		require.NotNil(t, a.InstanceID)
	}
	check()
	moved := []rayd.Transform{testscene.RandomTransform(r, 1), testscene.RandomTransform(r, 1)}
	require.NoError(t, s.SetInstanceTransforms(context.Background(), 5, moved))
	require.NoError(t, x.SetTransforms(5, moved))
	check()
	require.Equal(t, moved[1], s.Instances()[6].Transform)
}

func TestInstancedSceneErrors(t *testing.T) {
	ctx := context.Background()
	grid := testscene.Grid(2, 1, 0)
	cpu := rayd.WithBackend(rayd.BackendCPU)
	_, err := rayd.NewScene(ctx, []rayd.Mesh{grid}, cpu, rayd.WithInstances(nil))
	require.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = rayd.NewScene(ctx, []rayd.Mesh{grid}, cpu, rayd.WithInstances([]rayd.Instance{{Geometry: 1, Transform: rayd.IdentityTransform}}))
	require.ErrorIs(t, err, rayd.ErrInstanceGeometry)
	singular := rayd.Transform{1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0}
	_, err = rayd.NewScene(ctx, []rayd.Mesh{grid}, cpu, rayd.WithInstances([]rayd.Instance{{Geometry: 0, Transform: singular}}))
	require.ErrorIs(t, err, rayd.ErrInvalidTransform)

	s := instancedCPU(t, []rayd.Mesh{grid}, []rayd.Instance{{Geometry: 0, Transform: rayd.IdentityTransform}})
	require.ErrorIs(t, s.SetInstanceTransform(ctx, 0, singular), rayd.ErrInvalidTransform)
	require.ErrorIs(t, s.SetInstanceTransform(ctx, 1, rayd.IdentityTransform), rayd.ErrInstanceGeometry)
	require.Equal(t, rayd.IdentityTransform, s.Instances()[0].Transform, "a refused update changes nothing")

	// Queries without an instanced form are refused by name, never
	// answered over the bare meshes.
	_, err = s.TraceReflections(ctx, rayd.Rays{Origins: []float32{0, 0, 1}, Directions: []float32{0, 0, -1}}, 1)
	require.ErrorIs(t, err, rayd.ErrUnsupported)
	require.Contains(t, err.Error(), "TraceReflections")
	_, err = s.Visible(ctx, []float32{0, 0, 1}, []float32{0, 0, -1}, nil)
	require.ErrorIs(t, err, rayd.ErrUnsupported)
	require.Contains(t, err.Error(), "Visible")

	plain, err := rayd.NewScene(ctx, []rayd.Mesh{grid}, cpu)
	require.NoError(t, err)
	defer plain.Close()
	require.Zero(t, plain.NumInstances())
	require.Nil(t, plain.Instances())
	require.ErrorIs(t, plain.SetInstanceTransform(ctx, 0, rayd.IdentityTransform), rayd.ErrInvalidArgument)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.SetInstanceTransform(ctx, 0, rayd.IdentityTransform), rayd.ErrClosed)
}

// A vertex update of a dynamic geometry moves every instance of it.
func TestInstancedUpdateVertices(t *testing.T) {
	ctx := context.Background()
	grid := testscene.Grid(2, 1, 0)
	grid.Dynamic = true
	s := instancedCPU(t, []rayd.Mesh{grid}, []rayd.Instance{
		{Geometry: 0, Transform: rayd.IdentityTransform}, {Geometry: 0, Transform: testscene.Translation(3, 0, 0)}})
	rays := rayd.Rays{Origins: []float32{0.1, 0.1, 2, 3.1, 0.1, 2}, Directions: []float32{0, 0, -1, 0, 0, -1}}
	h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	require.Equal(t, []float32{2, 2}, h.T)
	require.Equal(t, []int32{0, 1}, h.InstanceID)
	v := append([]float32(nil), grid.Vertices...)
	for i := 2; i < len(v); i += 3 {
		v[i] = 0.5
	}
	require.NoError(t, s.UpdateVertices(ctx, 0, v))
	h, err = s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float32{1.5, 1.5}, h.T, 1e-6)
}

// Two instances of one unit square: the second is moved 3 along x and
// doubled in size. A ray down the z axis over each finds its instance; t
// is measured along the world ray. Moving the second instance back over
// the first makes the lower instance id win the tie.
func ExampleWithInstances() {
	ctx := context.Background()
	square := rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	moved := rayd.Transform{2, 0, 0, 3, 0, 2, 0, 0, 0, 0, 2, -1}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{square}, rayd.WithBackend(rayd.BackendCPU),
		rayd.WithInstances([]rayd.Instance{{Geometry: 0, Transform: rayd.IdentityTransform}, {Geometry: 0, Transform: moved}}))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rays := rayd.Rays{Origins: []float32{0.5, 0.5, 4, 4.5, 1.5, 4}, Directions: []float32{0, 0, -2, 0, 0, -2}}
	h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	if err != nil {
		panic(err)
	}
	fmt.Println("t:", h.T, "instances:", h.InstanceID, "geometry:", h.ShapeID)
	if err := s.SetInstanceTransform(ctx, 1, rayd.IdentityTransform); err != nil {
		panic(err)
	}
	h, err = s.Intersect(ctx, rays, rayd.FlagsAll)
	if err != nil {
		panic(err)
	}
	fmt.Println("t:", h.T, "instances:", h.InstanceID)
	// Output:
	// t: [2 2.5] instances: [0 1] geometry: [0 0]
	// t: [2 +Inf] instances: [0 -1]
}

// The façade's transform gradient equals central differences of the loss
// gT·t + gP·p through a forward pass per perturbed transform entry.
func TestInstanceTransformVJPMatchesForwardDifferences(t *testing.T) {
	ctx := context.Background()
	r := testscene.Rand(t)
	// One large tilted triangle: the rows hit deep inside it, so the
	// winner stays frozen under the finite-difference steps.
	tri := rayd.Mesh{Vertices: []float32{-4, -4, 0, 4, -4, 0.3, 0, 4, -0.2}, Faces: []int32{0, 1, 2}}
	xf := rayd.Transform{0.9, 0.2, 0.1, 0.05, -0.15, 1.1, 0.2, -0.1, 0.1, -0.2, 0.8, 0.3}
	in := []rayd.Instance{{Geometry: 0, Transform: xf}}
	s := instancedCPU(t, []rayd.Mesh{tri}, in)
	const n = 64
	o, d := make([]float32, 3*n), make([]float32, 3*n)
	for i := range n {
		o[3*i], o[3*i+1], o[3*i+2] = float32(0.3*r.Float64()-0.15), float32(0.3*r.Float64()-0.15), 4
		d[3*i], d[3*i+1], d[3*i+2] = 0, 0, -1
	}
	rays := rayd.Rays{Origins: o, Directions: d}
	h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	gT, gP := make([]float32, n), make([]float32, 3*n)
	for i := range gT {
		gT[i] = float32(r.NormFloat64())
		gP[3*i], gP[3*i+1], gP[3*i+2] = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	grad, err := s.InstanceTransformVJP(ctx, rays, h, rayd.IntersectCotangents{T: gT, P: gP})
	require.NoError(t, err)
	require.Len(t, grad, 12)
	loss := func(xf rayd.Transform) float64 {
		require.NoError(t, s.SetInstanceTransform(ctx, 0, xf))
		hh, err := s.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		var l float64
		for i := range n {
			require.Equal(t, h.PrimID[i], hh.PrimID[i], "the winner must not change for this step")
			l += float64(gT[i]) * float64(hh.T[i])
			for k := range 3 {
				l += float64(gP[i*3+k]) * float64(hh.P[3*i+k])
			}
		}
		return l
	}
	base := in[0].Transform
	const step = 1e-2 // float32 forward passes: a step far above their rounding
	for k := range 12 {
		hi, lo := base, base
		hi[k] += step
		lo[k] -= step
		num := (loss(hi) - loss(lo)) / (float64(hi[k]) - float64(lo[k]))
		require.InDelta(t, num, grad[k], 5e-3*(1+abs(num)), "entry %d", k)
	}
	_, err = s.InstanceTransformVJP(ctx, rays, h, rayd.IntersectCotangents{UV: make([]float32, 2*n)})
	require.ErrorIs(t, err, rayd.ErrInvalidArgument)
	h.InstanceID = nil
	_, err = s.InstanceTransformVJP(ctx, rays, h, rayd.IntersectCotangents{T: gT})
	require.ErrorIs(t, err, rayd.ErrInvalidArgument)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
