package replica_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// TestGPUEdgeQueriesMatchOneDevice: nearest_edge, nearest_edge_ray and
// nearest_edges:3 on replicated layers (two replicas of device 0, and
// devices 0 and 1 when visible; rows split down to one row per replica, in
// 777-row chunks, and streamed through Offload with every row handed out
// once) are bitwise the single-device accel.EdgeBVH records, which equal
// the CPU edge scene (±0 aside): as built, after an edge mask change, with
// a vertex update staged (still the old geometry, also on a layer whose
// replicas build their edge BVH only then), after the broadcast sync and
// after the mask is cleared. Every replica ends with its own edge BVH on
// its own device.
func TestGPUEdgeQueriesMatchOneDevice(t *testing.T) {
	for _, devs := range deviceLists(t) {
		t.Run(fmt.Sprint(devs), func(t *testing.T) {
			f := newFixtureOn(t, devs)
			modes := f.opModes(t)
			f.stages(t, modes, func(stage string, w *world, modes []modeLayer) {
				for _, n := range opSizes(stage) {
					checkEdgeQueries(t, f, w, modes, fmt.Sprintf("%s N=%d", stage, n), n)
				}
			})
			for _, m := range modes {
				for i, r := range m.reps {
					require.NotNil(t, r.EdgeBVH(), "%s: replica %d never built its edge BVH", m.name, i)
					require.Same(t, r.LaunchDevice(), r.EdgeBVH().Device(), "%s: replica %d", m.name, i)
				}
				require.NotSame(t, m.reps[0].EdgeBVH(), m.reps[1].EdgeBVH(), "%s: the replicas share an edge BVH", m.name)
			}
		})
	}
}

// TestGPUEdgeBVHBuildUnderConcurrentCalls: the first edge calls of a fresh
// layer arrive from several goroutines at once (after a mask was
// broadcast): each replica builds its edge BVH once, with the mask, and
// every answer is the single-device one.
func TestGPUEdgeBVHBuildUnderConcurrentCalls(t *testing.T) {
	f := newFixture(t)
	l, reps := f.layer(t, shard.Options{MinRaysPerDevice: 1})
	w := f.newWorld(t, f.meshes, nil)
	mask := make([]bool, w.edgeScene().Edges.Len())
	for i := range mask {
		mask[i] = i%4 != 1
	}
	require.NoError(t, l.Broadcast(context.Background(), shard.SetEdgeMask{Mask: mask}))
	w = f.newWorld(t, f.meshes, mask)
	p, act := randomPoints(f, 20_011)
	want := w.nearestPoint(p, act)
	var wg sync.WaitGroup
	got := make([]*edge.PointResult, 6)
	errs := make([]error, len(got))
	for g := range got {
		wg.Go(func() {
			got[g], errs[g] = shard.RunRows(context.Background(), l, &shard.NearestEdge{Points: p, Active: act})
		})
	}
	wg.Wait()
	for g := range got {
		require.NoError(t, errs[g], "goroutine %d", g)
		samePoint(t, fmt.Sprintf("goroutine %d", g), got[g], want, false)
	}
	for i, r := range reps {
		require.NotNil(t, r.EdgeBVH(), "replica %d", i)
		require.Positive(t, r.Stats().Rows, "replica %d never ran", i)
	}
}

func checkEdgeQueries(t *testing.T, f *fixture, w *world, modes []modeLayer, what string, n int) {
	t.Helper()
	p, act := randomPoints(f, n)
	o, d, tmax := randomEdgeRays(f, n)
	rayAct := make([]bool, n)
	for i := range rayAct {
		rayAct[i] = i%11 != 4
	}
	const k = 3
	wantP, wantR, wantK := w.nearestPoint(p, act), w.nearestRay(o, d, tmax, rayAct), w.nearestK(p, k, act)
	for _, m := range modes {
		name := fmt.Sprintf("%s %s", m.name, what)
		gotP := runOp(t, m, &shard.NearestEdge{Points: p, Active: act}, (*edge.PointResult).Len)
		samePoint(t, name+" nearest_edge", gotP, wantP, false)
		gotR := runOp(t, m, &shard.NearestEdgeRay{O: o, D: d, TMax: tmax, Active: rayAct}, (*edge.RayResult).Len)
		sameRay(t, name+" nearest_edge_ray", gotR, wantR, false)
		gotK := runOp(t, m, &shard.NearestEdges{Points: p, K: k, Active: act}, (*edge.TopK).Len)
		sameTopK(t, name+" nearest_edges", gotK, wantK, false)
	}
}

// nearestPoint is the single-device record of a point query (outputs
// poisoned), checked against the CPU edge scene.
func (w *world) nearestPoint(p []float32, act []bool) *edge.PointResult {
	t, s, b := w.t, w.single.s, w.edgeBVH()
	n := len(p) / 3
	out := accel.EdgePointOut{Distance: poisoned[float32](t, s, n), EdgePoint: poisoned[float32](t, s, 3*n),
		EdgeT: poisoned[float32](t, s, n), ShapeID: poisoned[int32](t, s, n), EdgeID: poisoned[int32](t, s, n),
		GlobalEdgeID: poisoned[int32](t, s, n)}
	require.NoError(t, b.NearestPoint(s, accel.EdgePoints{P: upload(t, s, p, false), Active: upload(t, s, bytesOf(act), true), N: n}, out))
	got := &edge.PointResult{Distance: fetch(t, s, out.Distance, n), EdgePoint: fetch(t, s, out.EdgePoint, 3*n),
		EdgeT: fetch(t, s, out.EdgeT, n), ShapeID: fetch(t, s, out.ShapeID, n), EdgeID: fetch(t, s, out.EdgeID, n),
		GlobalEdgeID: fetch(t, s, out.GlobalEdgeID, n)}
	want, err := w.edgeScene().NearestPoint(p, act)
	require.NoError(t, err)
	samePoint(t, "single-device nearest_edge against the CPU", got, want, true)
	return got
}

// nearestRay is the single-device record of a ray query.
func (w *world) nearestRay(o, d, tmax []float32, act []bool) *edge.RayResult {
	t, s, b := w.t, w.single.s, w.edgeBVH()
	n := len(o) / 3
	f := func(per int) *launch.Buffer[float32] { return poisoned[float32](t, s, per*n) }
	i := func() *launch.Buffer[int32] { return poisoned[int32](t, s, n) }
	out := accel.EdgeRayOut{Distance: f(1), RayT: f(1), Point: f(3), EdgeT: f(1), EdgePoint: f(3), ShapeID: i(),
		EdgeID: i(), GlobalEdgeID: i()}
	rays := deviceRays(t, s, batch{o: o, d: d, tmax: tmax, active: act})
	require.NoError(t, b.NearestRay(s, rays, out))
	got := &edge.RayResult{Distance: fetch(t, s, out.Distance, n), RayT: fetch(t, s, out.RayT, n),
		Point: fetch(t, s, out.Point, 3*n), EdgeT: fetch(t, s, out.EdgeT, n), EdgePoint: fetch(t, s, out.EdgePoint, 3*n),
		ShapeID: fetch(t, s, out.ShapeID, n), EdgeID: fetch(t, s, out.EdgeID, n), GlobalEdgeID: fetch(t, s, out.GlobalEdgeID, n)}
	want, err := w.edgeScene().NearestRay(o, d, tmax, act)
	require.NoError(t, err)
	sameRay(t, "single-device nearest_edge_ray against the CPU", got, want, true)
	return got
}

// nearestK is the single-device record of a top-k query.
func (w *world) nearestK(p []float32, k int, act []bool) *edge.TopK {
	t, s, b := w.t, w.single.s, w.edgeBVH()
	n := len(p) / 3
	m := n * k
	f := func(per int) *launch.Buffer[float32] { return poisoned[float32](t, s, per*m) }
	i := func() *launch.Buffer[int32] { return poisoned[int32](t, s, m) }
	out := accel.EdgeTopKOut{Valid: poisoned[uint8](t, s, m), Boundary: poisoned[uint8](t, s, m), Distance: f(1),
		Point: f(3), EdgeT: f(1), EdgePoint: f(3), ShapeID: i(), EdgeID: i(), GlobalEdgeID: i()}
	q := accel.EdgePoints{P: upload(t, s, p, false), Active: upload(t, s, bytesOf(act), true), N: n}
	require.NoError(t, b.NearestK(s, q, k, out))
	got := &edge.TopK{K: k, Valid: boolsOf(fetch(t, s, out.Valid, m)), Boundary: boolsOf(fetch(t, s, out.Boundary, m)),
		Distance: fetch(t, s, out.Distance, m), Point: fetch(t, s, out.Point, 3*m), EdgeT: fetch(t, s, out.EdgeT, m),
		EdgePoint: fetch(t, s, out.EdgePoint, 3*m), ShapeID: fetch(t, s, out.ShapeID, m), EdgeID: fetch(t, s, out.EdgeID, m),
		GlobalEdgeID: fetch(t, s, out.GlobalEdgeID, m)}
	want, err := w.edgeScene().NearestK(p, k, act)
	require.NoError(t, err)
	sameTopK(t, "single-device nearest_edges against the CPU", got, want, true)
	return got
}

func samePoint(t *testing.T, what string, got, want *edge.PointResult, zeroes bool) {
	t.Helper()
	require.NotNil(t, got, what)
	sameF32(t, what+" distance", got.Distance, want.Distance, zeroes)
	sameF32(t, what+" edge_point", got.EdgePoint, want.EdgePoint, zeroes)
	sameF32(t, what+" edge_t", got.EdgeT, want.EdgeT, zeroes)
	require.Equal(t, want.ShapeID, got.ShapeID, what+" shape_id")
	require.Equal(t, want.EdgeID, got.EdgeID, what+" edge_id")
	require.Equal(t, want.GlobalEdgeID, got.GlobalEdgeID, what+" global_edge_id")
}

func sameRay(t *testing.T, what string, got, want *edge.RayResult, zeroes bool) {
	t.Helper()
	require.NotNil(t, got, what)
	sameF32(t, what+" distance", got.Distance, want.Distance, zeroes)
	sameF32(t, what+" ray_t", got.RayT, want.RayT, zeroes)
	sameF32(t, what+" point", got.Point, want.Point, zeroes)
	sameF32(t, what+" edge_t", got.EdgeT, want.EdgeT, zeroes)
	sameF32(t, what+" edge_point", got.EdgePoint, want.EdgePoint, zeroes)
	require.Equal(t, want.ShapeID, got.ShapeID, what+" shape_id")
	require.Equal(t, want.EdgeID, got.EdgeID, what+" edge_id")
	require.Equal(t, want.GlobalEdgeID, got.GlobalEdgeID, what+" global_edge_id")
}

func sameTopK(t *testing.T, what string, got, want *edge.TopK, zeroes bool) {
	t.Helper()
	require.NotNil(t, got, what)
	require.Equal(t, want.K, got.K, what+" k")
	require.Equal(t, want.Valid, got.Valid, what+" valid")
	require.Equal(t, want.Boundary, got.Boundary, what+" boundary")
	sameF32(t, what+" distance", got.Distance, want.Distance, zeroes)
	sameF32(t, what+" point", got.Point, want.Point, zeroes)
	sameF32(t, what+" edge_t", got.EdgeT, want.EdgeT, zeroes)
	sameF32(t, what+" edge_point", got.EdgePoint, want.EdgePoint, zeroes)
	require.Equal(t, want.ShapeID, got.ShapeID, what+" shape_id")
	require.Equal(t, want.EdgeID, got.EdgeID, what+" edge_id")
	require.Equal(t, want.GlobalEdgeID, got.GlobalEdgeID, what+" global_edge_id")
}
