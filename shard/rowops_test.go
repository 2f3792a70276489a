package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/shard"
)

// rowConfigs are the layers the new per_ray operations run on: two
// simulated devices and one device named twice (AllowSameDevice), each
// pipelined, sharded (DisablePipeline) and chunked (ChunkRays), with floors
// low enough that the rows really split over both replicas.
var rowConfigs = []struct {
	name    string
	devices []int
	opts    shard.Options
	mode    shard.Mode
}{
	{"devices-0-1/pipelined", []int{0, 1}, shard.Options{MinRaysPerDevice: 1}, shard.ModePipelined},
	{"devices-0-1/sharded", []int{0, 1}, shard.Options{MinRaysPerDevice: 1, DisablePipeline: true}, shard.ModeSharded},
	{"devices-0-1/chunked", []int{0, 1}, shard.Options{ChunkRays: 29}, shard.ModeChunked},
	{"devices-0-0/pipelined", []int{0, 0}, shard.Options{AllowSameDevice: true, MinRaysPerDevice: 1}, shard.ModePipelined},
	{"devices-0-0/sharded", []int{0, 0}, shard.Options{AllowSameDevice: true, MinRaysPerDevice: 1, DisablePipeline: true}, shard.ModeSharded},
	{"devices-0-0/chunked", []int{0, 0}, shard.Options{AllowSameDevice: true, ChunkRays: 29}, shard.ModeChunked},
}

// Every nearest-edge query, visibility variant and backward pass equals the
// single CPU reference over the whole batch — records and row gradients bit
// for bit, vertex gradient sums within summation error — on every layer
// configuration: as built, with a vertex update staged (not yet visible),
// after the update's SyncGeometry, after an edge mask, and after a second
// update under the mask. Each call splits its rows over both replicas, and
// each replica launches exactly its shard's rows.
func TestRowOpsMatchTheReference(t *testing.T) {
	for _, cfg := range rowConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			r := testscene.Rand(t)
			ctx := context.Background()
			l, c := rowLayer(t, cfg.devices, cfg.opts)
			s := newSingle(t)
			in := newRowInputs(r, s, 150+r.IntN(250))
			check := func(phase string, ops []rowOp) {
				t.Helper()
				for _, op := range ops {
					c.ResetStats()
					got, err := op.run(ctx, l)
					require.NoError(t, err, "%s %s", phase, op.key)
					op.check(t, got)
					requireSplit(t, l, c, cfg.mode, op)
				}
			}
			check("built", rowOps(t, s, in))

			ops := rowOps(t, s, in)
			require.NoError(t, l.Broadcast(ctx, shard.UpdateVertices{Mesh: 0, Vertices: moved()}))
			check("staged", ops) // queries see the new vertices only after the sync

			require.NoError(t, l.Broadcast(ctx, shard.SyncGeometry{}))
			s.update(t, moved())
			check("synced", rowOps(t, s, in))

			mask := randMask(r, s.edges.Edges.Len())
			require.NoError(t, l.Broadcast(ctx, shard.SetEdgeMask{Mask: mask}))
			require.NoError(t, s.edges.SetMask(mask))
			check("masked", rowOps(t, s, in))

			jittered := moved()
			for i := 2; i < len(jittered); i += 3 {
				jittered[i] += float32(r.NormFloat64() * 0.05)
			}
			require.NoError(t, l.Broadcast(ctx, shard.UpdateVertices{Mesh: 0, Vertices: jittered}))
			require.NoError(t, l.Broadcast(ctx, shard.SyncGeometry{}))
			s.update(t, jittered)
			check("moved under the mask", rowOps(t, s, in))
			require.NoError(t, l.Poisoned())
		})
	}
}

// requireSplit checks the dispatch of the last call: the configured mode,
// a shard per replica, and per replica (slot) launches covering exactly
// that shard's rows.
func requireSplit(t *testing.T, l *shard.Layer, c *simdev.Cluster, mode shard.Mode, op rowOp) {
	t.Helper()
	d := l.LastDispatch()
	require.Equal(t, op.key, d.Operation)
	require.Equal(t, mode, d.Mode, op.key)
	require.Equal(t, op.rows, d.Rows, op.key)
	require.Len(t, d.Shards, 2, "%s: the rows split over both replicas", op.key)
	for i, sh := range d.Shards {
		require.Equal(t, i, sh.Replica)
		st := c.SlotStats(sh.Device, sh.Replica)
		require.Equal(t, sh.Len(), st.RowsLaunched, "%s: replica %d launched its shard's rows", op.key, i)
		if i > 0 {
			require.Positive(t, st.BytesIn, "%s: a remote's rows are copied in", op.key)
			require.Positive(t, st.BytesOut, "%s: and gathered back", op.key)
		}
	}
}
