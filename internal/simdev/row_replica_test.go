package simdev_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/shard"
)

// edgeRef is the nearest-edge reference over meshes with a mask.
func edgeRef(t *testing.T, ms []geom.Mesh, mask []bool, points []float32) *edge.PointResult {
	t.Helper()
	tables, err := geom.BuildTables(ms)
	require.NoError(t, err)
	s := edge.NewScene(tables)
	require.NoError(t, s.SetMask(mask))
	r, err := s.NearestPoint(points, nil)
	require.NoError(t, err)
	return r
}

func edgePoints(n int) []float32 {
	o, _ := workload.PlaneRays(n, 7)
	for i := 2; i < len(o); i += 3 {
		o[i] = 0.1 * float32(i%5)
	}
	return o
}

// The edge queries of a replica read its vertices as of the last
// SyncGeometry and its mask as of the last SetEdgeMask, each in stream
// order: a staged update is invisible, a launch enqueued before a mutation
// is not disturbed by it.
func TestEdgeQueriesFollowTheMutations(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 1})
	m, err := c.NewReplica(0, true, meshes())
	require.NoError(t, err)
	defer m.Close()
	p := edgePoints(40)
	tk := &shard.NearestEdge{Points: p}
	query := func() any {
		got, err := run(t, m, m, tk, 0, 40)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, edgeRef(t, meshes(), nil, p), query())

	lifted := meshes()
	for i := 2; i < len(lifted[0].Vertices); i += 3 {
		lifted[0].Vertices[i] = 0.05 * lifted[0].Vertices[i-2]
	}
	require.NoError(t, m.Apply(shard.UpdateVertices{Mesh: 0, Vertices: lifted[0].Vertices}))
	require.Equal(t, edgeRef(t, meshes(), nil, p), query(), "staged, not committed")
	require.NoError(t, m.Apply(shard.SyncGeometry{}))
	require.Equal(t, edgeRef(t, lifted, nil, p), query())

	mask := make([]bool, 56) // 4×4 cells: 56 edges
	for i := range mask {
		mask[i] = i%3 != 0
	}
	require.NoError(t, m.Apply(shard.SetEdgeMask{Mask: mask}))
	require.Equal(t, mask, m.EdgeMask())
	masked := edgeRef(t, lifted, mask, p)
	require.Equal(t, masked, query())

	// A launch issued before the next mask answers with the current one.
	in, ev, err := m.Scatter(tk, 0, 40)
	require.NoError(t, err)
	out, ev, err := m.Launch(tk, in, 0, 40, ev)
	require.NoError(t, err)
	require.NoError(t, m.Apply(shard.SetEdgeMask{}))
	got, err := m.Result(tk, out, ev)
	require.NoError(t, err)
	require.Equal(t, masked, got)
	in.Release()
	out.Release()
	require.Equal(t, edgeRef(t, lifted, nil, p), query(), "an empty mask enables every edge")

	// A mask of the wrong length is recorded (as on a GPU replica) and
	// fails the edge queries, not the others, until a good one replaces it.
	require.NoError(t, m.Apply(shard.SetEdgeMask{Mask: []bool{true}}))
	_, err = run(t, m, m, tk, 0, 40)
	require.ErrorIs(t, err, geom.ErrLength)
	_, err = run(t, m, m, task(8), 0, 8)
	require.NoError(t, err)
	require.NoError(t, m.Apply(shard.SetEdgeMask{Mask: mask}))
	require.Equal(t, masked, query())
	require.Zero(t, c.LivePayloads())
}

// A backward pass naming another vertex count than the scene's is refused
// with a typed error.
func TestBackwardPassesCheckTheVertexCount(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 1})
	m, err := c.NewReplica(0, true, meshes())
	require.NoError(t, err)
	defer m.Close()
	o, d := workload.PlaneRays(4, 1)
	ids := []int32{0, 1, -1, 2}
	for _, tk := range []shard.Task{
		&shard.IntersectVJP{O: o, D: d, Prim: ids, Vertices: 24},
		&shard.NearestEdgeVJP{Points: o, GlobalEdgeID: ids, Vertices: 26},
		&shard.NearestEdgeRayVJP{O: o, D: d, GlobalEdgeID: ids, Vertices: 0},
	} {
		_, err := run(t, m, m, tk, 0, 4)
		require.ErrorIs(t, err, geom.ErrInvalidArgument, tk.Op().Key)
		require.ErrorContains(t, err, "the scene has 25")
	}
}

// A remote's copies of a new task are priced by its byte model: the rows
// of nearest_edges are 12 bytes in and 46·K out.
func TestRowTaskCopiesArePriced(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 2, LinkBytesPerSecond: 1e9})
	m, _ := c.NewReplica(0, true, meshes())
	r, _ := c.NewReplica(1, false, meshes())
	defer m.Close()
	defer r.Close()
	p := edgePoints(50)
	tk := &shard.NearestEdges{Points: p, K: 3}
	c.ResetStats()
	got, err := run(t, r, m, tk, 10, 30)
	require.NoError(t, err)
	tables, err := geom.BuildTables(meshes())
	require.NoError(t, err)
	want, err := edge.NewScene(tables).NearestK(p[30:90], 3, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)
	st := c.Stats(1)
	require.Equal(t, int64(20*12), st.BytesIn)
	require.Equal(t, int64(20*46*3), st.BytesOut)
	require.InDelta(t, 20*(12+46*3), c.Elapsed().Nanoseconds(), 2, "1 ns per byte over the link")
}
