package rayd_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
)

// seamMeshes is a dynamic grid and a sphere: faces, edges and boundaries.
func seamMeshes() []rayd.Mesh {
	m := []rayd.Mesh{testscene.Grid(12, 2, 0), testscene.Sphere([3]float32{0, 0, 0.4}, 0.3, 10, 6)}
	m[0].Dynamic = true
	return m
}

// simReplicated is a replicated scene of meshes on simulated devices devs.
func simReplicated(t *testing.T, meshes []rayd.Mesh, devs []int, o rayd.MultiDeviceOptions) (*rayd.Scene, *simdev.Cluster) {
	t.Helper()
	cluster := simdev.New(simdev.Config{Devices: 2})
	o.AllowSameDevice = true
	s, err := rayd.NewScene(context.Background(), meshes, rayd.WithDevices(devs...), rayd.WithReplicaSource(cluster),
		rayd.WithMultiDevice(o))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, cluster
}

func relClose(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	num, den := 0.0, 0.0
	for i := range want {
		num += (want[i] - got[i]) * (want[i] - got[i])
		den += want[i] * want[i]
	}
	assert.LessOrEqual(t, math.Sqrt(num), tol*math.Max(math.Sqrt(den), 1e-300), what)
}

// A replicated scene (simulated devices, and two replicas on one device)
// answers the edge queries, the visibility variants and the backward passes
// on its replicas — never on the host — row for row the CPU scene, and
// records the dispatch.
func TestReplicatedSceneRunsEveryOperationOnItsReplicas(t *testing.T) {
	ctx := context.Background()
	r := testscene.Rand(t)
	meshes := seamMeshes()
	cpu := cpuScene(t, meshes...)
	for _, devs := range [][]int{{0, 1}, {0, 0}} {
		s, cluster := simReplicated(t, meshes, devs, rayd.MultiDeviceOptions{MinRaysPerDevice: 1})
		pts, ends := randomPoints(r, 777), randomPoints(r, 777)
		rays := rayd.Rays{Origins: pts, Directions: ends}
		mask := make([]bool, s.NumEdges())
		for i := range mask {
			mask[i] = r.IntN(3) > 0
		}
		for round := range 2 {
			if round == 1 {
				require.NoError(t, s.SetEdgeMask(ctx, mask))
				require.NoError(t, cpu.SetEdgeMask(ctx, mask))
			}
			cluster.ResetStats()
			gotP, err := s.NearestEdge(ctx, pts)
			require.NoError(t, err)
			wantP, err := cpu.NearestEdge(ctx, pts)
			require.NoError(t, err)
			assert.Equal(t, wantP, gotP, "%v nearest edge, round %d", devs, round)
			assert.Positive(t, cluster.Stats(0).Launches+cluster.Stats(1).Launches, "the replicas answered")
			assert.Equal(t, "nearest_edge", s.LastDispatch().Operation)
			assert.Len(t, s.LastDispatch().Shards, 2, "the rows were split")
			gotR, err := s.NearestEdgeRay(ctx, rays)
			require.NoError(t, err)
			wantR, err := cpu.NearestEdgeRay(ctx, rays)
			require.NoError(t, err)
			assert.Equal(t, wantR, gotR)
			gotK, err := s.NearestEdges(ctx, pts, 4, nil)
			require.NoError(t, err)
			wantK, err := cpu.NearestEdges(ctx, pts, 4, nil)
			require.NoError(t, err)
			assert.Equal(t, wantK, gotK)

			g := edge.PointCotangent{Distance: make([]float64, 777), EdgeT: make([]float64, 777)}
			for i := range g.Distance {
				g.Distance[i], g.EdgeT[i] = r.NormFloat64(), r.NormFloat64()
			}
			dp, dv, err := s.NearestEdgeVJP(ctx, pts, gotP, g)
			require.NoError(t, err)
			wdp, wdv, err := cpu.NearestEdgeVJP(ctx, pts, wantP, g)
			require.NoError(t, err)
			assert.Equal(t, wdp, dp, "per-row gradients are exact")
			relClose(t, wdv, dv, 1e-12, "vertex sums")
		}
		require.NoError(t, cpu.SetEdgeMask(ctx, nil))

		a, b, err := s.VisiblePair(ctx, pts, ends, pts, nil, nil)
		require.NoError(t, err)
		wa, wb, err := cpu.VisiblePair(ctx, pts, ends, pts, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, wa, a)
		assert.Equal(t, wb, b)
		assert.Equal(t, "visible_pair", s.LastDispatch().Operation)
		chainLen := make([]int32, 777/3*1)
		for i := range chainLen {
			chainLen[i] = int32(r.IntN(4))
		}
		ch, err := s.VisibleChain(ctx, pts[:3*3*len(chainLen)], 3, chainLen, nil, nil)
		require.NoError(t, err)
		wch, err := cpu.VisibleChain(ctx, pts[:3*3*len(chainLen)], 3, chainLen, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, wch, ch)

		full, err := cpu.Intersect(ctx, rays, rayd.FlagsAll)
		require.NoError(t, err)
		cot := rayd.IntersectCotangents{T: make([]float32, 777)}
		for i := range cot.T {
			cot.T[i] = float32(r.NormFloat64())
		}
		gv, err := s.IntersectVJP(ctx, rays, full, cot)
		require.NoError(t, err)
		wv, err := cpu.IntersectVJP(ctx, rays, full, cot)
		require.NoError(t, err)
		assert.Equal(t, wv.Origins, gv.Origins)
		assert.Equal(t, wv.Directions, gv.Directions)
		assert.Equal(t, "intersect_vjp", s.LastDispatch().Operation)
		assert.InDeltaSlice(t, wv.Vertices, gv.Vertices, 1e-3, "float32 partial sums")
	}
}

// With ChunkRays and Offload, every per_ray operation streams every row
// exactly once through the hook, in chunks of its own record type.
func TestReplicatedOffloadStreamsEveryRowOnce(t *testing.T) {
	ctx := context.Background()
	r := testscene.Rand(t)
	const n = 1000
	pts, ends := randomPoints(r, n), randomPoints(r, n)
	seen := map[string][]int{}
	var op string
	hook := func(start int, chunk any) error {
		rows := 0
		switch c := chunk.(type) {
		case *edge.PointResult:
			rows = c.Len()
		case *edge.RayResult:
			rows = c.Len()
		case *edge.TopK:
			rows = c.Len()
		case *geom.PairVisibility:
			rows = c.Len()
		case *geom.ChainVisibility:
			rows = c.Len()
		case []bool:
			rows = len(c)
		case *geom.Hits:
			rows = c.Len()
		default:
			t.Errorf("%s: chunk of type %T", op, chunk)
		}
		for i := start; i < start+rows; i++ {
			seen[op] = append(seen[op], i)
		}
		return nil
	}
	s, _ := simReplicated(t, seamMeshes(), []int{0, 1}, rayd.MultiDeviceOptions{ChunkRays: 96, Offload: hook})
	for name, run := range map[string]func() error{
		"nearest_edge":     func() error { _, err := s.NearestEdge(ctx, pts); return err },
		"nearest_edge_ray": func() error { _, err := s.NearestEdgeRay(ctx, rayd.Rays{Origins: pts, Directions: ends}); return err },
		"nearest_edges":    func() error { _, err := s.NearestEdges(ctx, pts, 3, nil); return err },
		"visible_pair":     func() error { _, _, err := s.VisiblePair(ctx, pts, ends, pts, nil, nil); return err },
		"visible_edge": func() error {
			_, err := s.VisibleEdge(ctx, rayd.EdgeSamples{Source: pts, Position: ends, Direction: pts,
				TMin: make([]float32, n), TMax: make([]float32, n)})
			return err
		},
		"visible": func() error { _, err := s.Visible(ctx, pts, ends, nil); return err },
	} {
		op = name
		require.NoError(t, run(), name)
		rows := seen[name]
		require.Len(t, rows, n, "%s: every row once", name)
		counts := make([]int, n)
		for _, i := range rows {
			counts[i]++
		}
		for i, c := range counts {
			require.Equal(t, 1, c, "%s row %d", name, i)
		}
		assert.Equal(t, "chunked", string(s.LastDispatch().Mode), name)
	}
}

// A replicated scene whose remote replica fails a vertex update refuses
// work with an error naming the recovery call; after Rebuild it answers
// bitwise like a fresh scene.
func TestReplicatedSceneRecoversThroughRebuild(t *testing.T) {
	ctx := context.Background()
	r := testscene.Rand(t)
	meshes := seamMeshes()
	s, cluster := simReplicated(t, meshes, []int{0, 1}, rayd.MultiDeviceOptions{MinRaysPerDevice: 1})
	moved := append([]float32(nil), meshes[0].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] += 0.1
	}
	cluster.Inject(simdev.Fault{Device: 1, Stage: simdev.StageApply, Nth: 1})
	err := s.UpdateVertices(ctx, 0, moved)
	require.Error(t, err)
	assert.ErrorIs(t, err, rayd.ErrPoisoned)
	assert.ErrorContains(t, err, "Rebuild")
	pts, ends := randomPoints(r, 500), randomPoints(r, 500)
	rays := rayd.Rays{Origins: pts, Directions: ends}
	_, err = s.Intersect(ctx, rays, rayd.FlagsAll)
	require.ErrorIs(t, err, rayd.ErrPoisoned)
	assert.ErrorContains(t, err, "Scene.Rebuild", "every refusal names the recovery call")
	cluster.ClearFaults()
	require.NoError(t, s.Rebuild(ctx))
	got, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	fresh := cpuScene(t, meshes...)
	want, err := fresh.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	assert.True(t, testscene.SameHits(want, got), "after Rebuild the scene answers like a fresh one")
	require.NoError(t, s.UpdateVertices(ctx, 0, moved))
	require.NoError(t, fresh.UpdateVertices(ctx, 0, moved))
	got, err = s.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	want, err = fresh.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	assert.True(t, testscene.SameHits(want, got))
}

// Calibrate takes a custom probe named "nearest_edge" and stores the split
// under that key (the contract's calibrate section).
func TestCalibrateNearestEdgeProbe(t *testing.T) {
	ctx := context.Background()
	r := testscene.Rand(t)
	s, _ := simReplicated(t, seamMeshes(), []int{0, 1}, rayd.MultiDeviceOptions{})
	pts := randomPoints(r, 2048)
	probe := s.NewProbe(func(ctx context.Context, on *rayd.Scene) error {
		_, err := on.NearestEdge(ctx, pts)
		return err
	})
	rec, err := s.Calibrate(ctx, rayd.CalibrateOptions{Probe: probe,
		Options: calibrate.Options{Operation: "nearest_edge", Rows: 2048, Repeats: 2, MaxProbeTime: time.Second}})
	require.NoError(t, err)
	assert.Equal(t, "nearest_edge", rec.Operation)
	w, err := s.DeviceWeights("nearest_edge")
	require.NoError(t, err)
	assert.Equal(t, rec.Weights, w)
}

// The edge table and the face offsets are public (spec §1.3).
func TestEdgeTableAndFaceOffsets(t *testing.T) {
	meshes := seamMeshes()
	s := cpuScene(t, meshes...)
	assert.Equal(t, []int32{0, int32(meshes[0].NumFaces())}, s.FaceOffsets())
	assert.Equal(t, []int32{0, int32(meshes[0].NumVertices())}, s.VertexOffsets())
	et, err := s.Edges()
	require.NoError(t, err)
	require.Equal(t, s.NumEdges(), et.Len())
	for i := range et.Len() {
		assert.Less(t, et.V0[i], et.V1[i])
		assert.Equal(t, et.Face1[i] < 0, et.IsBoundary[i])
	}
}
