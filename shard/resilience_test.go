package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/shard"
)

// requireRefusesEverything checks that a poisoned layer refuses every entry
// with a *PoisonedError naming op (§13 row 27).
func requireRefusesEverything(t *testing.T, l *shard.Layer, op string) {
	t.Helper()
	check := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, shard.ErrPoisoned)
		var pe *shard.PoisonedError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, op, pe.Operation)
	}
	_, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(8, 1), geom.FlagsAll))
	check(err)
	_, err = l.WeightsFor("intersect_full")
	check(err)
	_, err = l.MasterReplica()
	check(err)
	_, err = l.PlanRows(shard.VisibleOp(), 8)
	check(err)
	_, err = l.PlanLanes(toyOp(), 64, 0, -1)
	check(err)
	check(l.Broadcast(context.Background(), shard.SyncGeometry{}))
	check(l.SetOperationWeights("visible", []float64{1, 1}))
	check(l.Poisoned())
}

func moved() []float32 {
	v := workload.GridMesh(8, 2).Vertices
	for i := 2; i < len(v); i += 3 {
		v[i] = 0.25 * v[i-2] // tilt the plane
	}
	return v
}

// test_every_partial_broadcast_poison_fails_closed and
// test_partial_vertex_broadcast_requires_a_complete_rebuild.
func TestPartialBroadcastPoisons(t *testing.T) {
	for _, m := range []shard.Mutation{
		shard.UpdateVertices{Mesh: 0, Vertices: moved()},
		shard.SyncGeometry{},
		shard.SetEdgeMask{Mask: []bool{true, false}},
	} {
		t.Run(m.Operation(), func(t *testing.T) {
			l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1})
			c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageApply, Nth: 1})
			err := l.Broadcast(context.Background(), m)
			require.ErrorIs(t, err, simdev.ErrInjected)
			require.ErrorIs(t, err, shard.ErrReplica)
			require.ErrorIs(t, err, shard.ErrPoisoned)
			require.Equal(t, 1, c.Stats(0).Applies)
			require.Equal(t, 1, c.Stats(1).Applies)
			requireRefusesEverything(t, l, m.Operation())
			// Only a complete build restores the layer.
			require.NoError(t, l.Build(context.Background(), c.Builder(0, fixtureMeshes())))
			require.NoError(t, l.Poisoned())
			checkAllOps(t, l, reference(t), newBatch(40, 2))
		})
	}
}

// test_version_divergence_also_poisons_the_replica_set; §13 row 26.
func TestVersionDivergencePoisons(t *testing.T) {
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{})
	c.Inject(simdev.Fault{Device: 0, Stage: simdev.StageApply, Silent: true})
	err := l.Broadcast(context.Background(), shard.SyncGeometry{})
	require.ErrorIs(t, err, shard.ErrDiverged)
	require.ErrorContains(t, err, "replicas diverged: versions [0 1] on devices [0 1]")
	var de *shard.DivergedError
	require.ErrorAs(t, err, &de)
	requireRefusesEverything(t, l, "sync")
}

// test_broadcast_update_and_sync_match_a_freshly_built_scene and
// test_edge_mask_is_broadcast_to_every_replica.
func TestBroadcastMatchesAFreshScene(t *testing.T) {
	devices := []int{0, 1, 2, 3}
	l, c := newLayer(t, 4, devices, shard.Options{MinRaysPerDevice: 1})
	b := newBatch(65, 3)
	ctx := context.Background()
	require.NoError(t, l.Broadcast(ctx, shard.UpdateVertices{Mesh: 0, Vertices: moved()}))
	checkAllOps(t, l, reference(t), b) // staged, not yet committed
	require.NoError(t, l.Broadcast(ctx, shard.SyncGeometry{}))
	fresh := fixtureMeshes()
	fresh[0].Vertices = moved()
	want, err := c.NewReplica(0, true, fresh)
	require.NoError(t, err)
	defer want.Close()
	checkAllOps(t, l, want.Scene(), b)
	mask := []bool{true, false, true}
	require.NoError(t, l.Broadcast(ctx, shard.SetEdgeMask{Mask: mask}))
	master, err := l.MasterReplica()
	require.NoError(t, err)
	require.Equal(t, uint64(3), master.Version())
	require.Equal(t, mask, master.(*simdev.Replica).EdgeMask())
	// A bad update is refused by the first replica: nothing changed, but the
	// layer cannot know that in general and fails closed.
	err = l.Broadcast(ctx, shard.UpdateVertices{Mesh: 0, Vertices: []float32{1}})
	require.ErrorIs(t, err, geom.ErrInvalidMesh)
	require.ErrorIs(t, err, shard.ErrPoisoned)
}

// A failed build poisons by "build"; querying before any build is
// ErrNotBuilt (§13 row 28); a closed layer is not built.
func TestBuildFailures(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 2})
	l, err := shard.Plan([]int{0, 1}, c, shard.Options{})
	require.NoError(t, err)
	_, err = shard.RunRows(context.Background(), l, visibleTask(newBatch(4, 1)))
	require.ErrorIs(t, err, shard.ErrNotBuilt)
	c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageBuild, Nth: 1})
	err = l.Build(context.Background(), c.Builder(0, fixtureMeshes()))
	require.ErrorIs(t, err, simdev.ErrInjected)
	requireRefusesEverything(t, l, "build")
	require.NoError(t, l.Build(context.Background(), c.Builder(0, fixtureMeshes())))
	_, err = shard.RunRows(context.Background(), l, visibleTask(newBatch(4, 1)))
	require.NoError(t, err)
	// A builder that returns the wrong device is refused too.
	err = l.Build(context.Background(), c.Builder(0, fixtureMeshes()))
	require.NoError(t, err)
	err = l.Build(context.Background(), func(ctx context.Context, _ shard.Slot) (shard.Replica, error) {
		return c.NewReplica(0, true, fixtureMeshes())
	})
	require.ErrorContains(t, err, "builder returned the replica of cuda:0")
	require.ErrorIs(t, err, shard.ErrPoisoned)
	require.NoError(t, l.Close())
	require.Zero(t, c.LivePayloads())
}

// A replica failing a query step — at once or through its event — fails the
// call with a *ReplicaError naming the device, but replicas that only read
// cannot diverge: the layer stays usable and nothing leaks.
func TestQueryFailureDoesNotPoison(t *testing.T) {
	for _, f := range []simdev.Fault{
		{Device: 1, Stage: simdev.StageScatter, Nth: 2},
		{Device: 1, Stage: simdev.StageLaunch, Nth: 3},
		{Device: 1, Stage: simdev.StageLaunch, Nth: 1, Async: true},
		{Device: 1, Stage: simdev.StageGather, Nth: 2, Async: true},
		{Device: 0, Stage: simdev.StageResult, Nth: 2},
		{Device: 1, Stage: simdev.StageEnter, Nth: 1},
	} {
		t.Run(string(f.Stage), func(t *testing.T) {
			l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1})
			c.Inject(f)
			_, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(64, 4), geom.FlagsAll))
			require.ErrorIs(t, err, simdev.ErrInjected)
			require.ErrorIs(t, err, shard.ErrReplica)
			require.NotErrorIs(t, err, shard.ErrPoisoned)
			var re *shard.ReplicaError
			require.ErrorAs(t, err, &re)
			require.Equal(t, "intersect_full", re.Operation)
			require.NoError(t, l.Poisoned())
			entered := c.Stats(1).Enters
			if f.Stage == simdev.StageEnter {
				entered-- // the failed entry never started the call there
			}
			require.Equal(t, c.Stats(0).Enters, c.Stats(0).Exits, "every entered device got its exit edge")
			require.Equal(t, entered, c.Stats(1).Exits)
			require.Zero(t, c.LivePayloads())
			checkAllOps(t, l, reference(t), newBatch(64, 5))
		})
	}
}

// test_chunk_executor_has_an_unconditional_stream_exit_edge and §13 row 35:
// a failed exit edge poisons by "stream handoff"; when the call had failed
// already, its own error is kept and the poison note attached.
func TestStreamHandoffFailurePoisons(t *testing.T) {
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1})
	c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageExit, Nth: 1})
	_, err := shard.RunRows(context.Background(), l, visibleTask(newBatch(64, 6)))
	require.ErrorIs(t, err, shard.ErrPoisoned)
	require.ErrorIs(t, err, simdev.ErrInjected)
	requireRefusesEverything(t, l, "stream handoff")

	l, c = newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1})
	boom := errors.New("launch failed")
	c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageLaunch, Nth: 1, Err: boom})
	c.Inject(simdev.Fault{Device: 0, Stage: simdev.StageExit, Nth: 1})
	_, err = shard.RunRows(context.Background(), l, visibleTask(newBatch(64, 6)))
	require.ErrorIs(t, err, boom, "the original error is kept")
	require.ErrorIs(t, err, shard.ErrPoisoned, "and the poison note attached")
	require.Equal(t, 1, c.Stats(1).Exits, "every device's exit edge ran")
}

// test_offload_exception_joins_streams_before_mutation: the hook's error
// propagates, every exit edge ran, and a mutation right after works.
func TestOffloadErrorJoinsStreamsBeforeMutation(t *testing.T) {
	bad := errors.New("consumer full")
	calls := 0
	hook := func(int, any) error {
		calls++
		if calls == 2 {
			return bad
		}
		return nil
	}
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{ChunkRays: 5, Offload: hook})
	_, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(40, 7), geom.FlagsAll))
	require.ErrorIs(t, err, bad)
	require.ErrorContains(t, err, "offload hook at row 20")
	require.Equal(t, 2, calls, "no chunk is handed out after the failure")
	require.Equal(t, c.Stats(0).Enters, c.Stats(0).Exits)
	require.Equal(t, c.Stats(1).Enters, c.Stats(1).Exits)
	require.NoError(t, l.Broadcast(context.Background(), shard.UpdateVertices{Mesh: 0, Vertices: moved()}))
	require.NoError(t, l.Broadcast(context.Background(), shard.SyncGeometry{}))
	require.NoError(t, l.Poisoned())
}

// Cancellation through ctx at chunk boundaries: the error wraps ctx.Err(),
// no chunk is handed out after it, nothing leaks and the layer stays usable.
func TestCancellationAtChunkBoundaries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var starts []int
	hook := func(start int, _ any) error {
		starts = append(starts, start)
		if len(starts) == 3 {
			cancel()
		}
		return nil
	}
	l, c := newLayer(t, 2, []int{0, 1}, shard.Options{ChunkRays: 4, Offload: hook})
	_, err := shard.RunRows(ctx, l, intersectTask(newBatch(64, 8), geom.FlagsAll))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "cancelled at chunk boundary")
	require.Equal(t, []int{0, 32, 4}, starts)
	require.Less(t, c.Stats(0).Launches+c.Stats(1).Launches, 16, "issuing stopped early")
	require.Equal(t, c.Stats(1).Enters, c.Stats(1).Exits)
	require.NoError(t, l.Poisoned())

	// Cancelled before the call: nothing is launched.
	c.ResetStats()
	_, err = shard.RunRows(ctx, l, intersectTask(newBatch(64, 8), geom.FlagsAll))
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, c.Stats(0).Launches+c.Stats(1).Launches)

	// A deadline in a pipelined call without a hook; then the scene works.
	l2, _ := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 1})
	dctx, dcancel := context.WithTimeout(context.Background(), 0)
	defer dcancel()
	_, err = shard.RunRows(dctx, l2, reflectTask(newBatch(64, 9), 2))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	checkAllOps(t, l2, reference(t), newBatch(64, 9))
	// Broadcasts check ctx once, before touching any replica.
	err = l2.Broadcast(ctx, shard.SyncGeometry{})
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, l2.Poisoned())
}
