package rayd_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

func cpuScene(t *testing.T, meshes ...rayd.Mesh) *rayd.Scene {
	t.Helper()
	s, err := rayd.NewScene(context.Background(), meshes, rayd.WithBackend(rayd.BackendCPU))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func unitTriangle() rayd.Mesh {
	return rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}, Dynamic: true}
}

func TestIntersectUnitTriangle(t *testing.T) {
	s := cpuScene(t, unitTriangle())
	assert.Equal(t, rayd.BackendCPU, s.Backend())
	assert.Equal(t, -1, s.Device())
	hits, err := s.Intersect(context.Background(), rayd.Rays{
		Origins:    []float32{0.25, 0.25, -1, 5, 5, -1},
		Directions: []float32{0, 0, 1, 0, 0, 1},
	}, rayd.FlagsAll)
	require.NoError(t, err)
	require.Equal(t, 2, hits.Len())
	assert.Equal(t, float32(1), hits.T[0])
	assert.Equal(t, []float32{0.25, 0.25, 0}, hits.P[0:3])
	assert.Equal(t, []float32{0.5, 0.25, 0.25}, hits.Bary[0:3])
	assert.Equal(t, []float32{0, 0, 1}, hits.GeoN[0:3])
	assert.Equal(t, int32(0), hits.PrimID[0])
	assert.True(t, math.IsInf(float64(hits.T[1]), 1))
	assert.Equal(t, int32(-1), hits.ShapeID[1])
	assert.Equal(t, 76, hits.RowBytes())

	minimal, err := s.Intersect(context.Background(), rayd.Rays{Origins: []float32{0.25, 0.25, -1}, Directions: []float32{0, 0, 2}}, rayd.FlagsNone)
	require.NoError(t, err)
	assert.Equal(t, float32(0.5), minimal.T[0])
	assert.Nil(t, minimal.P)
	assert.Equal(t, 4, minimal.RowBytes())
}

func TestValidationErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	_, err := rayd.NewScene(ctx, nil, rayd.WithBackend(rayd.BackendCPU))
	assert.ErrorIs(t, err, rayd.ErrNoMeshes)
	bad := rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 3}}
	_, err = rayd.NewScene(ctx, []rayd.Mesh{unitTriangle(), bad}, rayd.WithBackend(rayd.BackendCPU))
	assert.ErrorIs(t, err, rayd.ErrInvalidMesh)
	var me *geom.MeshError
	require.True(t, errors.As(err, &me))
	assert.Equal(t, 1, me.Mesh)
	nan := rayd.Mesh{Vertices: []float32{0, 0, float32(math.NaN()), 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	_, err = rayd.NewScene(ctx, []rayd.Mesh{nan}, rayd.WithBackend(rayd.BackendCPU))
	assert.ErrorIs(t, err, rayd.ErrInvalidMesh)
	_, err = rayd.NewScene(ctx, []rayd.Mesh{{}}, rayd.WithBackend(rayd.BackendCPU))
	assert.ErrorIs(t, err, rayd.ErrInvalidMesh)
	_, err = rayd.NewScene(ctx, []rayd.Mesh{unitTriangle()}, rayd.WithBackend("vulkan"))
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = rayd.NewScene(ctx, []rayd.Mesh{unitTriangle()}, rayd.WithDevice(-1))
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)

	s := cpuScene(t, unitTriangle(), testscene.Box([3]float32{3, 0, 0}, [3]float32{1, 1, 1}))
	_, err = s.Intersect(ctx, rayd.Rays{Origins: []float32{0, 0}, Directions: []float32{0, 0, 1}}, rayd.FlagsAll)
	assert.ErrorIs(t, err, rayd.ErrLength)
	_, err = s.Intersect(ctx, rayd.Rays{Origins: []float32{0, 0, 0}, Directions: []float32{0, 0, 1}, TMax: []float32{1, 2}}, rayd.FlagsAll)
	assert.ErrorIs(t, err, rayd.ErrLength)
	_, err = s.Intersect(ctx, rayd.Rays{Origins: []float32{0, 0, 0}, Directions: []float32{0, 0, 1}}, rayd.Flags(8))
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = s.TraceReflections(ctx, rayd.Rays{Origins: []float32{0, 0, 0}, Directions: []float32{0, 0, 1}}, 0)
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = s.TraceReflections(ctx, rayd.Rays{Origins: []float32{0, 0, 0}, Directions: []float32{0, 0, 1}}, -3)
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = s.Visible(ctx, []float32{0, 0, 0}, []float32{0, 0}, nil)
	assert.ErrorIs(t, err, rayd.ErrLength)
	// UpdateVertices: static mesh, wrong count, non-finite.
	assert.Error(t, s.UpdateVertices(ctx, 1, make([]float32, 24)))
	assert.ErrorIs(t, s.UpdateVertices(ctx, 0, make([]float32, 6)), rayd.ErrInvalidMesh)
	assert.Error(t, s.UpdateVertices(ctx, 0, []float32{0, 0, 0, 1, 0, 0, 0, float32(math.Inf(1)), 0}))
	assert.Error(t, s.UpdateVertices(ctx, 7, make([]float32, 9)))
	// The device fast path is refused on the CPU backend.
	_, err = s.AllocHits(4, rayd.FlagsAll)
	assert.ErrorIs(t, err, rayd.ErrBackendUnavailable)
	// Cancelled context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Intersect(cctx, rayd.Rays{Origins: []float32{0, 0, 0}, Directions: []float32{0, 0, 1}}, rayd.FlagsAll)
	assert.ErrorIs(t, err, context.Canceled)
	// Closed scene.
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Intersect(ctx, rayd.Rays{}, rayd.FlagsAll)
	assert.ErrorIs(t, err, rayd.ErrClosed)
	assert.ErrorIs(t, s.UpdateVertices(ctx, 0, make([]float32, 9)), rayd.ErrClosed)
}

func TestEmptyBatchesAreShapedAndLaunchNothing(t *testing.T) {
	s := cpuScene(t, unitTriangle())
	ctx := context.Background()
	h, err := s.Intersect(ctx, rayd.Rays{}, rayd.FlagsAll)
	require.NoError(t, err)
	assert.Equal(t, 0, h.Len())
	assert.NotNil(t, h.P)
	r, err := s.TraceReflections(ctx, rayd.Rays{}, 4)
	require.NoError(t, err)
	assert.Equal(t, 0, r.Len())
	assert.Equal(t, 4, r.Bounces)
	v, err := s.Visible(ctx, nil, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, v)
}

func TestUpdateVerticesRefits(t *testing.T) {
	s := cpuScene(t, unitTriangle())
	ctx := context.Background()
	rays := rayd.Rays{Origins: []float32{0.25, 0.25, -1}, Directions: []float32{0, 0, 1}}
	h, err := s.Intersect(ctx, rays, rayd.FlagsNone)
	require.NoError(t, err)
	assert.Equal(t, float32(1), h.T[0])
	require.NoError(t, s.UpdateVertices(ctx, 0, []float32{0, 0, 2, 1, 0, 2, 0, 1, 2}))
	h, err = s.Intersect(ctx, rays, rayd.FlagsNone)
	require.NoError(t, err)
	assert.Equal(t, float32(3), h.T[0])
}

func TestAutoFallsBackToTheCPULoudly(t *testing.T) {
	// An ordinal no machine has makes the CUDA backend unavailable on every
	// machine, with or without a driver.
	const nowhere = 1 << 20
	var logs bytes.Buffer
	s, err := rayd.NewScene(context.Background(), []rayd.Mesh{unitTriangle()}, rayd.WithDevice(nowhere),
		rayd.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, rayd.BackendCPU, s.Backend())
	// The warning itself is logged once per process
	// (TestFallbackWarnsOncePerProcess); the backend says it either way.
	h, err := s.Intersect(context.Background(), rayd.Rays{Origins: []float32{0.25, 0.25, -1}, Directions: []float32{0, 0, 1}}, rayd.FlagsAll)
	require.NoError(t, err)
	assert.Equal(t, float32(1), h.T[0])
	_, err = rayd.NewScene(context.Background(), []rayd.Mesh{unitTriangle()}, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(nowhere))
	assert.ErrorIs(t, err, rayd.ErrBackendUnavailable)
}
