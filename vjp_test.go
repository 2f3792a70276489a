package rayd_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/gputest"
)

func TestIntersectVJPOnTheCPUBackend(t *testing.T) {
	// Two meshes: the unit triangle is mesh 1, so its gradient sits after
	// mesh 0's vertices.
	far := rayd.Mesh{Vertices: []float32{0, 0, 5, 1, 0, 5, 0, 1, 5, 1, 1, 5}, Faces: []int32{0, 1, 2, 1, 3, 2}}
	s := cpuScene(t, far, unitTriangle())
	ctx := context.Background()
	rays := rayd.Rays{Origins: []float32{.25, .25, -1, 9, 9, -1}, Directions: []float32{0, 0, 1, 0, 0, 1}}
	hits, err := s.Intersect(ctx, rays, rayd.FlagGeometric)
	require.NoError(t, err)
	g, err := s.IntersectVJP(ctx, rays, hits, rayd.IntersectCotangents{T: []float32{1, 1}})
	require.NoError(t, err)
	assert.Equal(t, 7, s.NumVertices())
	assert.Equal(t, make([]float32, 12), g.MeshVertices(0))
	assert.Equal(t, []float32{0, 0, .5, 0, 0, .25, 0, 0, .25}, g.MeshVertices(1))
	assert.Equal(t, []float32{0, 0, -1, 0, 0, 0}, g.Origins, "the miss row gets zeros")
	assert.Equal(t, []float32{0, 0, -1, 0, 0, 0}, g.Directions)

	// After UpdateVertices the gradient follows the new geometry: the
	// triangle lifted by 1 doubles t, and ∂t/∂d_z = −t.
	require.NoError(t, s.UpdateVertices(ctx, 1, []float32{0, 0, 1, 1, 0, 1, 0, 1, 1}))
	hits, err = s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	g, err = s.IntersectVJP(ctx, rays, hits, rayd.IntersectCotangents{T: []float32{1, 0}})
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, -2}, g.Directions[:3])
}

func TestIntersectVJPArguments(t *testing.T) {
	s := cpuScene(t, unitTriangle())
	ctx := context.Background()
	rays := rayd.Rays{Origins: []float32{.25, .25, -1}, Directions: []float32{0, 0, 1}}
	tOnly, err := s.Intersect(ctx, rays, rayd.FlagsNone)
	require.NoError(t, err)
	_, err = s.IntersectVJP(ctx, rays, tOnly, rayd.IntersectCotangents{})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument, "the tape needs prim ids")
	_, err = s.IntersectVJP(ctx, rays, nil, rayd.IntersectCotangents{})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	full, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	_, err = s.IntersectVJP(ctx, rays, full, rayd.IntersectCotangents{P: []float32{1}})
	assert.ErrorIs(t, err, rayd.ErrLength)
	_, err = s.IntersectVJP(ctx, rayd.Rays{Origins: []float32{1, 2}}, full, rayd.IntersectCotangents{})
	assert.ErrorIs(t, err, rayd.ErrLength)
	assert.ErrorIs(t, s.IntersectVJPInto(ctx, nil, nil, rayd.DeviceIntersectCotangents{}, rayd.DeviceIntersectGrads{}),
		rayd.ErrBackendUnavailable)
	require.NoError(t, s.Close())
	_, err = s.IntersectVJP(ctx, rays, full, rayd.IntersectCotangents{})
	assert.ErrorIs(t, err, rayd.ErrClosed)
}

// TestGPUIntersectVJPMatchesTheCPUBackend: the CUDA scene's host path, its
// device path and the CPU reference agree.
func TestGPUIntersectVJPMatchesTheCPUBackend(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	ctx := context.Background()
	mesh := gridMeshForVJP(12)
	gpu, err := rayd.NewScene(ctx, []rayd.Mesh{mesh}, rayd.WithBackend(rayd.BackendCUDA))
	require.NoError(t, err)
	defer gpu.Close()
	cpu := cpuScene(t, mesh)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 5000
	rays := rayd.Rays{Origins: make([]float32, 3*n), Directions: make([]float32, 3*n)}
	gt := make([]float32, n)
	for i := range n {
		rays.Origins[3*i], rays.Origins[3*i+1], rays.Origins[3*i+2] = rng.Float32()*1.8-0.9, rng.Float32()*1.8-0.9, 2
		rays.Directions[3*i], rays.Directions[3*i+1], rays.Directions[3*i+2] = rng.Float32()*0.2-0.1, rng.Float32()*0.2-0.1, -1
		gt[i] = rng.Float32()*2 - 1
	}
	hits, err := gpu.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	cot := rayd.IntersectCotangents{T: gt}
	got, err := gpu.IntersectVJP(ctx, rays, hits, cot)
	require.NoError(t, err)
	want, err := cpu.IntersectVJP(ctx, rays, hits, cot)
	require.NoError(t, err)
	scale := 0.0
	for _, v := range want.Vertices {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range want.Vertices {
		require.InDelta(t, want.Vertices[i], got.Vertices[i], 1e-4*math.Abs(float64(want.Vertices[i]))+1e-5*scale, "vertex coordinate %d", i)
	}
	for i := range want.Origins {
		require.InDelta(t, want.Origins[i], got.Origins[i], 1e-6*math.Abs(float64(want.Origins[i]))+1e-12, "origin %d", i)
		require.InDelta(t, want.Directions[i], got.Directions[i], 1e-6*math.Abs(float64(want.Directions[i]))+1e-12, "direction %d", i)
	}

	// Device path on the same rays.
	dr, err := gpu.UploadRays(ctx, rays)
	require.NoError(t, err)
	defer dr.Close()
	dh, err := gpu.AllocHits(n, rayd.FlagsAll)
	require.NoError(t, err)
	defer dh.Close()
	require.NoError(t, gpu.IntersectInto(ctx, dr, dh))
	dt, err := gpu.UploadRays(ctx, rayd.Rays{Origins: make([]float32, 3*n), Directions: make([]float32, 3*n)})
	require.NoError(t, err)
	defer dt.Close()
	s := mustStreamOn(t, dt.Origins)
	gtDev, err := dt.Origins.View(0, n)
	require.NoError(t, err)
	require.NoError(t, gtDev.Upload(s, gt))
	require.NoError(t, s.Synchronize())
	out := rayd.DeviceIntersectGrads{Vertices: dt.Directions}
	require.NoError(t, gpu.IntersectVJPInto(ctx, dr, dh, rayd.DeviceIntersectCotangents{T: gtDev}, out))
	dv := make([]float32, 3*gpu.NumVertices())
	require.NoError(t, dt.Directions.Download(s, dv))
	for i := range dv {
		require.InDelta(t, got.Vertices[i], dv[i], 1e-5*math.Abs(float64(got.Vertices[i]))+1e-6*scale, "device path vertex %d", i)
	}
}

func gridMeshForVJP(cells int) rayd.Mesh {
	n := cells + 1
	m := rayd.Mesh{Dynamic: true}
	for j := range n {
		for i := range n {
			m.Vertices = append(m.Vertices, -1+2*float32(i)/float32(cells), -1+2*float32(j)/float32(cells), 0)
		}
	}
	for j := range cells {
		for i := range cells {
			a := int32(j*n + i)
			m.Faces = append(m.Faces, a, a+1, a+int32(n), a+1, a+int32(n)+1, a+int32(n))
		}
	}
	return m
}

// The frozen-winner gradient of a hit distance: the vertices share ∂t in
// proportion to the hit's barycentrics (½, ¼, ¼), and raising the origin or
// lengthening the direction shortens t.
func ExampleScene_IntersectVJP() {
	ctx := context.Background()
	tri := rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	scene, err := rayd.NewScene(ctx, []rayd.Mesh{tri}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer scene.Close()
	rays := rayd.Rays{Origins: []float32{.25, .25, -1}, Directions: []float32{0, 0, 1}}
	hits, _ := scene.Intersect(ctx, rays, rayd.FlagsAll)
	// loss = t, so ∂L/∂t = 1.
	g, err := scene.IntersectVJP(ctx, rays, hits, rayd.IntersectCotangents{T: []float32{1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("dL/dv:", g.Vertices)
	fmt.Println("dL/do:", g.Origins, "dL/dd:", g.Directions)
	// Output:
	// dL/dv: [0 0 0.5 0 0 0.25 0 0 0.25]
	// dL/do: [0 0 -1] dL/dd: [0 0 -1]
}
