package rayd_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/ref"
)

// closestMeshes is a dynamic grid, a closed box and a sphere, and a soup.
func closestMeshes(r *rand.Rand) []rayd.Mesh {
	g := testscene.Grid(8, 2, -0.5)
	g.Dynamic = true
	return []rayd.Mesh{g, testscene.Box([3]float32{0.3, 0, 0.2}, [3]float32{0.4, 0.3, 0.2}),
		testscene.Sphere([3]float32{-0.6, 0.4, 0.1}, 0.35, 10, 7), testscene.Soup(r, 200, 0.15)}
}

// bruteClosest is the reference without a BVH over the scene's meshes.
func bruteClosest(t *testing.T, meshes []rayd.Mesh, points []float32, maxDist float32, active []bool) *geom.ClosestPoints {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	s, err := ref.NewScene(tb, ref.BruteForce())
	require.NoError(t, err)
	c, err := s.ClosestPoints(points, maxDist, active)
	require.NoError(t, err)
	return c
}

// requireSameClosest compares two records bit for bit.
func requireSameClosest(t *testing.T, want, got *geom.ClosestPoints, what string) {
	t.Helper()
	require.Equal(t, want.Len(), got.Len(), what)
	for _, f := range []struct {
		name string
		a, b []float32
	}{{"Dist", want.Dist, got.Dist}, {"Point", want.Point, got.Point}, {"Bary", want.Bary, got.Bary}} {
		for i := range f.a {
			require.Equalf(t, math.Float32bits(f.a[i]), math.Float32bits(f.b[i]), "%s: %s[%d] %v != %v", what, f.name, i, f.a[i], f.b[i])
		}
	}
	require.Equal(t, want.GlobalFaceID, got.GlobalFaceID, what)
	require.Equal(t, want.ShapeID, got.ShapeID, what)
	require.Equal(t, want.LocalFaceID, got.LocalFaceID, what)
}

// closestBatch is n random points around the scene, with a NaN row and
// a random active mask.
func closestBatch(r *rand.Rand, n int) ([]float32, []bool) {
	p := randomPoints(r, n)
	p[4] = float32(math.NaN())
	active := make([]bool, n)
	for i := range active {
		active[i] = r.IntN(5) != 0
	}
	return p, active
}

// ClosestPoint on the CPU backend and on a replicated scene of simulated
// devices is the brute-force reference bit for bit, bounded and unbounded,
// with and without a mask, and after a vertex update.
func TestClosestPointMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(81, 82))
	meshes := closestMeshes(r)
	sim, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(0, 1),
		rayd.WithReplicaSource(simdev.New(simdev.Config{Devices: 2})))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sim.Close() })
	scenes := map[string]*rayd.Scene{"cpu": cpuScene(t, meshes...), "replicated": sim}
	check := func(step string) {
		for _, maxDist := range []float32{0, 0.25, float32(math.Inf(1))} {
			points, active := closestBatch(r, 700)
			for _, act := range [][]bool{nil, active} {
				want := bruteClosest(t, meshes, points, maxDist, act)
				for name, s := range scenes {
					got, err := s.ClosestPoint(ctx, points, maxDist, rayd.ClosestOptions{Active: act})
					require.NoError(t, err)
					requireSameClosest(t, want, got.ClosestPointRecord, step+" "+name)
					assert.Nil(t, got.Sign)
				}
				valid := 0
				for i := range want.Len() {
					if want.Valid(i) {
						valid++
						if maxDist > 0 {
							assert.LessOrEqual(t, want.Dist[i], maxDist)
						}
					}
				}
				assert.Positive(t, valid, "the batch must find faces")
			}
		}
	}
	check("built")
	moved := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] += 0.3 * float32(r.Float64())
	}
	for _, s := range scenes {
		require.NoError(t, s.UpdateVertices(ctx, 0, moved))
	}
	meshes[0].Vertices = moved
	check("moved")
}

// A point equidistant from two faces gets the lower global face id.
func TestClosestPointTiesToTheLowestFace(t *testing.T) {
	// Two copies of one triangle: every point ties.
	m := rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2, 0, 1, 2}}
	s := cpuScene(t, m, m)
	res, err := s.ClosestPoint(context.Background(), []float32{0.2, 0.2, 1, 5, 5, -1}, 0, rayd.ClosestOptions{})
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0}, res.GlobalFaceID)
	assert.Equal(t, []int32{0, 0}, res.ShapeID)
	assert.Equal(t, float32(1), res.Dist[0])
	assert.Equal(t, []float32{0.2, 0.2, 0}, res.Point[:3])
}

// The winding and parity signs are −1 inside the closed box and sphere and
// +1 outside; inactive and non-finite rows get 0.
func TestClosestPointSigns(t *testing.T) {
	box := testscene.Box([3]float32{0, 0, 0}, [3]float32{1, 1, 1})
	sphere := testscene.Sphere([3]float32{4, 0, 0}, 1, 16, 10)
	s := cpuScene(t, box, sphere)
	points := []float32{0.1, 0.2, 0.05, 4.2, 0.1, -0.3, 2, 0, 0, 0, 0, 3, float32(math.NaN()), 0, 0, 0.5, 0.5, 0.5}
	active := []bool{true, true, true, true, true, false}
	for _, mode := range []rayd.SignMode{rayd.SignWinding, rayd.SignParity} {
		res, err := s.ClosestPoint(context.Background(), points, 0, rayd.ClosestOptions{Active: active, Sign: mode})
		require.NoError(t, err)
		assert.Equal(t, []int8{-1, -1, 1, 1, 0, 0}, res.Sign, "mode %d", mode)
		assert.False(t, res.Valid(4))
		assert.False(t, res.Valid(5))
	}
}

// Bad inputs are typed errors; an empty batch is an empty record; a done
// context and a closed scene are refused.
func TestClosestPointErrors(t *testing.T) {
	ctx := context.Background()
	s := cpuScene(t, unitTriangle())
	_, err := s.ClosestPoint(ctx, []float32{1, 2}, 0, rayd.ClosestOptions{})
	assert.ErrorIs(t, err, rayd.ErrLength)
	var le *geom.LengthError
	assert.ErrorAs(t, err, &le)
	_, err = s.ClosestPoint(ctx, []float32{1, 2, 3}, 0, rayd.ClosestOptions{Active: []bool{true, false}})
	assert.ErrorIs(t, err, rayd.ErrLength)
	_, err = s.ClosestPoint(ctx, []float32{1, 2, 3}, float32(math.NaN()), rayd.ClosestOptions{})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	_, err = s.ClosestPoint(ctx, []float32{1, 2, 3}, 0, rayd.ClosestOptions{Sign: 7})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)

	res, err := s.ClosestPoint(ctx, nil, 0, rayd.ClosestOptions{Sign: rayd.SignWinding})
	require.NoError(t, err)
	assert.Zero(t, res.Len())
	assert.Empty(t, res.Sign)

	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.ClosestPoint(done, []float32{1, 2, 3}, 0, rayd.ClosestOptions{})
	assert.ErrorIs(t, err, context.Canceled)

	_, _, err = s.ClosestPointVJP(ctx, []float32{1, 2, 3}, nil, rayd.ClosestCotangent{})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)
	res, err = s.ClosestPoint(ctx, []float32{0.2, 0.2, 1}, 0, rayd.ClosestOptions{})
	require.NoError(t, err)
	_, _, err = s.ClosestPointVJP(ctx, []float32{0.2, 0.2, 1}, res, rayd.ClosestCotangent{Dist: []float32{1, 2}})
	assert.ErrorIs(t, err, rayd.ErrLength)
	bad := &rayd.ClosestResult{ClosestPointRecord: geom.NewClosestPoints(1)}
	bad.GlobalFaceID[0] = 9
	_, _, err = s.ClosestPointVJP(ctx, []float32{0.2, 0.2, 1}, bad, rayd.ClosestCotangent{})
	assert.ErrorIs(t, err, rayd.ErrInvalidArgument)

	require.NoError(t, s.Close())
	_, err = s.ClosestPoint(ctx, []float32{1, 2, 3}, 0, rayd.ClosestOptions{})
	assert.ErrorIs(t, err, rayd.ErrClosed)
}

// A large batch with a sign under a done context returns the context's
// error and no record.
func TestClosestPointRefusesADoneContext(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := cpuScene(t, closestMeshes(r)...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := s.ClosestPoint(ctx, randomPoints(r, 50000), 0, rayd.ClosestOptions{Sign: rayd.SignParity})
	require.Error(t, err)
	assert.Nil(t, res)
	assert.True(t, errors.Is(err, context.Canceled))
}

// The backward pass: above the interior of a face the distance gradient is
// the unit normal offset for the point and −b_k times it for vertex k; the
// point's cotangent flows to the vertices by the weights; it agrees with
// central differences of the float64 distance to the frozen face.
func TestClosestPointVJP(t *testing.T) {
	ctx := context.Background()
	m := rayd.Mesh{Vertices: []float32{0, 0, 0, 2, 0, 0, 0, 2, 0, 5, 5, 5}, Faces: []int32{0, 1, 2}}
	s := cpuScene(t, m)
	points := []float32{0.5, 0.25, 0.75, 3, 3, 0, 0.5, 0.5, 0}
	res, err := s.ClosestPoint(ctx, points, 0, rayd.ClosestOptions{})
	require.NoError(t, err)
	g := rayd.ClosestCotangent{Dist: []float32{1, 2, 3}, Point: []float32{0, 0, 0, 0, 0, 0, 1, 0, 0}}
	dp, dv, err := s.ClosestPointVJP(ctx, points, res, g)
	require.NoError(t, err)
	require.Len(t, dp, 9)
	require.Len(t, dv, 12)
	assert.InDeltaSlice(t, []float64{0, 0, 1}, dp[:3], 1e-12)
	// Row 1 is nearest to the hypotenuse midpoint (1, 1, 0): direction (1, 1, 0)/√2, gD = 2.
	assert.InDeltaSlice(t, []float64{math.Sqrt2, math.Sqrt2, 0}, dp[3:6], 1e-12)
	// Row 2 lies on the face: no distance gradient.
	assert.Equal(t, []float64{0, 0, 0}, dp[6:9])
	// Vertex 3 is in no face.
	assert.Equal(t, []float64{0, 0, 0}, dv[9:12])
	// Central differences of Σ g·D over vertex coordinates with the frozen
	// weights, plus the point cotangent of row 2 (weights of (0.5, 0.5, 0)).
	loss := func(v []float64) float64 {
		sum := 0.0
		for i := range 3 {
			var q [3]float64
			for k := range 3 {
				for c := range 3 {
					q[c] += float64(res.Bary[3*i+k]) * v[3*k+c]
				}
			}
			d := math.Sqrt(sq(float64(points[3*i])-q[0]) + sq(float64(points[3*i+1])-q[1]) + sq(float64(points[3*i+2])-q[2]))
			sum += float64(g.Dist[i])*d + float64(g.Point[3*i])*q[0]
		}
		return sum
	}
	v := make([]float64, 9)
	for i := range v {
		v[i] = float64(m.Vertices[i])
	}
	for j := range v {
		h := 1e-6
		vp, vm := append([]float64(nil), v...), append([]float64(nil), v...)
		vp[j] += h
		vm[j] -= h
		assert.InDelta(t, (loss(vp)-loss(vm))/(2*h), dv[j], 1e-6, "vertex coordinate %d", j)
	}
}

func sq(x float64) float64 { return x * x }

// A deadline that passes during a large signed batch (the closest faces,
// then rows × faces for the sign) stops the call between row blocks with
// the context's error and no record.
func TestClosestPointStopsAtADeadline(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := cpuScene(t, closestMeshes(r)...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := s.ClosestPoint(ctx, randomPoints(r, 200000), 0, rayd.ClosestOptions{Sign: rayd.SignWinding})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, res)
}
