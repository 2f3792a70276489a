package replica

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// hostReplica is a replica without a device: enough for the mutations that
// only touch its host state (no BVH to refit, no edge BVH built).
func hostReplica(t *testing.T) *Replica {
	t.Helper()
	quad := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}, Dynamic: true}
	static := geom.Mesh{Vertices: []float32{0, 0, 1, 1, 0, 1, 0, 1, 1}, Faces: []int32{0, 1, 2}}
	tb, err := geom.BuildTables([]geom.Mesh{quad, static})
	require.NoError(t, err)
	return &Replica{tables: tb}
}

// A vertex update is validated like geom.Tables.UpdateVertices and staged:
// the tables keep the synced vertices, the staged copy is the replica's own.
func TestVertexUpdatesAreStagedUntilTheSync(t *testing.T) {
	r := hostReplica(t)
	synced := slices.Clone(r.tables.Vertices)
	moved := []float32{0, 0, 2, 1, 0, 2, 1, 1, 2, 0, 1, 2}
	require.NoError(t, r.Apply(shard.UpdateVertices{Mesh: 0, Vertices: moved}))
	assert.Equal(t, synced, r.tables.Vertices, "a staged update changed the tables")
	moved[2] = 9
	require.Len(t, r.pending, 1)
	assert.Equal(t, float32(2), r.pending[0].Vertices[2], "the staged update aliases the caller's slice")
	assert.Equal(t, uint64(1), r.Version())

	for name, m := range map[string]shard.UpdateVertices{
		"static mesh":  {Mesh: 1, Vertices: make([]float32, 9)},
		"mesh index":   {Mesh: 2, Vertices: make([]float32, 9)},
		"length":       {Mesh: 0, Vertices: make([]float32, 9)},
		"non-finite":   {Mesh: 0, Vertices: []float32{0, 0, float32(math.NaN()), 1, 0, 0, 1, 1, 0, 0, 1, 0}},
		"negative idx": {Mesh: -1, Vertices: nil},
	} {
		err := r.Apply(m)
		require.Error(t, err, name)
		assert.Equal(t, synced, r.tables.Vertices, "%s: a refused update changed the tables", name)
	}
	require.ErrorIs(t, r.Apply(shard.UpdateVertices{Mesh: 1, Vertices: make([]float32, 9)}), geom.ErrNotDynamic)
	assert.Len(t, r.pending, 1, "a refused update was staged")
	assert.Equal(t, uint64(1), r.Version(), "a refused update advanced the version")
}

// An edge mask is checked against the replica's edge table and recorded as
// a copy; an empty mask clears it.
func TestEdgeMaskIsCheckedAndRecorded(t *testing.T) {
	r := hostReplica(t)
	e := edge.Topology(r.tables).Len()
	require.Positive(t, e)
	var lerr *geom.LengthError
	require.ErrorAs(t, r.Apply(shard.SetEdgeMask{Mask: make([]bool, e+1)}), &lerr)
	assert.Equal(t, e, lerr.Want)
	assert.Nil(t, r.EdgeMask())
	mask := make([]bool, e)
	mask[1] = true
	require.NoError(t, r.Apply(shard.SetEdgeMask{Mask: mask}))
	mask[1] = false
	assert.True(t, r.EdgeMask()[1], "the recorded mask aliases the caller's")
	require.NoError(t, r.Apply(shard.SetEdgeMask{}))
	assert.Nil(t, r.EdgeMask())
	assert.Nil(t, r.EdgeBVH(), "a mask alone builds no edge BVH")
	assert.Equal(t, uint64(2), r.Version())
}

// A sync without staged updates has nothing to refit.
func TestSyncWithoutUpdatesIsANoOp(t *testing.T) {
	r := hostReplica(t)
	require.NoError(t, r.Apply(shard.SyncGeometry{}))
	assert.Equal(t, uint64(1), r.Version())
}
