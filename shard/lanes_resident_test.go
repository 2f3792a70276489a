package shard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/shard"
)

// TestResidentLanesMatchTheSteps: on replicas that keep the call resident,
// the three grid_reduce operations give the results of the step protocol
// (the same partials, folded in the same order), with the same dispatch,
// for sharded, chunked, master-only and last-only plans; the calls follow
// the ResidentLanes protocol and no simulated step runs.
func TestResidentLanesMatchTheSteps(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 1200, 5)
	for _, n := range []int{2, 3} {
		devices := rfDevices(n)
		for name, w := range rfWeightings(n) {
			for _, chunk := range []int{0, 256} {
				t.Run(fmt.Sprintf("%d/%s/chunk%d", n, name, chunk), func(t *testing.T) {
					o := shard.Options{Weights: w, MinLanesPerDevice: 1, ChunkRays: chunk}
					steps, _ := rfLayer(t, f, n, devices, o)
					l, c, _, log := residentLayer(t, f, n, devices, o)
					check := func(what string) {
						t.Helper()
						require.Equal(t, steps.LastDispatch(), l.LastDispatch(), "%s: dispatch", what)
						requireResidentOrder(t, *l.LastDispatch(), log.take())
						for _, d := range devices {
							st := c.Stats(d)
							require.Zero(t, st.Enters+st.Replicates+st.Launches+st.Gathers+st.Results, "%s: a step ran on cuda:%d", what, d)
						}
					}
					want, err := shard.RunAccumDfrDirect(ctx, steps, f.direct())
					require.NoError(t, err)
					got, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
					require.NoError(t, err)
					requireAccumEqual(t, want, got, "accum_dfr_direct")
					check("accum_dfr_direct")

					wantC, err := shard.RunAccumDfrCoherentDirect(ctx, steps, f.coherent())
					require.NoError(t, err)
					gotC, err := shard.RunAccumDfrCoherentDirect(ctx, l, f.coherent())
					require.NoError(t, err)
					requireCoherentEqual(t, wantC, gotC, "accum_dfr_coherent_direct")
					check("accum_dfr_coherent_direct")

					wantR, err := shard.RunAccumulateReflections(ctx, steps, f.reflections())
					require.NoError(t, err)
					gotR, err := shard.RunAccumulateReflections(ctx, l, f.reflections())
					require.NoError(t, err)
					requireReflEqual(t, wantR, gotR, "accumulate_reflections")
					check("accumulate_reflections")
				})
			}
		}
	}
}

// TestResidentLanesFailures: a failure at any step of any replica is the
// call's *ReplicaError with the step's stage and device; every replica
// begun is ended as failed (a replica whose begin failed is not), the layer
// stays usable, and the next call succeeds. A failed end poisons the layer.
func TestResidentLanesFailures(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 600, 3)
	want := f.wantDirect(t, f.opt)
	for _, tc := range []struct {
		slot         int
		fault, stage string
	}{
		{1, "begin", "replicate"}, {0, "begin", "replicate"}, {1, "launch", "launch"}, {0, "launch", "launch"},
		{1, "partial", "gather"}, {0, "fold", "fold"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.fault, tc.slot), func(t *testing.T) {
			l, _, sims, log := residentLayer(t, f, 2, rfDevices(2), shard.Options{MinLanesPerDevice: 1})
			sims[tc.slot].inject(tc.fault, errResident)
			_, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
			require.ErrorIs(t, err, errResident)
			require.ErrorIs(t, err, shard.ErrReplica)
			var re *shard.ReplicaError
			require.ErrorAs(t, err, &re)
			require.Equal(t, tc.stage, re.Stage)
			require.Equal(t, shard.OpAccumDfrDirect, re.Operation)
			begun, ended := map[int]bool{}, map[int]bool{}
			for _, s := range log.take() {
				switch s.Stage {
				case "begin":
					begun[s.Slot] = true
				case "end":
					require.True(t, s.Failed, "replica %d ended as successful", s.Slot)
					ended[s.Slot] = true
				}
			}
			require.Equal(t, begun, ended)
			require.NoError(t, l.Poisoned())

			sims[tc.slot].inject(tc.fault, nil)
			got, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
			require.NoError(t, err)
			requireAccumEqual(t, want, got, "after the failure")
		})
	}
	t.Run("end", func(t *testing.T) {
		l, _, sims, _ := residentLayer(t, f, 2, rfDevices(2), shard.Options{MinLanesPerDevice: 1})
		sims[1].inject("end", errResident)
		_, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
		require.ErrorIs(t, err, errResident)
		require.ErrorIs(t, err, shard.ErrPoisoned)
		var re *shard.ReplicaError
		require.ErrorAs(t, err, &re)
		require.Equal(t, "exit", re.Stage)
		require.ErrorIs(t, l.Poisoned(), shard.ErrPoisoned)
	})
}

// TestResidentLanesCancellation: a context cancelled before the call stops
// it at chunk boundary 0 with nothing begun; cancelled after the remote's
// first window, the call stops at the next boundary with ctx's error and
// every begun replica is ended as failed. The layer stays usable.
func TestResidentLanesCancellation(t *testing.T) {
	f := newRFFixture(t, testscene.Rand(t), 3000, 600, 3)
	l, _, sims, log := residentLayer(t, f, 2, rfDevices(2), shard.Options{MinLanesPerDevice: 1, ChunkRays: 512})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "cancelled at chunk boundary 0 of")
	require.Empty(t, log.take())

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	sims[1].mu.Lock()
	sims[1].onLaunch = cancel
	sims[1].mu.Unlock()
	_, err = shard.RunAccumDfrDirect(ctx, l, f.direct())
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "cancelled at chunk boundary 1 of")
	var launches, ends int
	for _, s := range log.take() {
		switch s.Stage {
		case "launch":
			launches++
		case "end":
			require.True(t, s.Failed)
			ends++
		case "fold", "partial":
			t.Fatalf("%s after the cancellation", s.Stage)
		}
	}
	require.Equal(t, 1, launches)
	require.Equal(t, 1, ends, "the remote, the only replica begun")
	require.NoError(t, l.Poisoned())
	sims[1].mu.Lock()
	sims[1].onLaunch = nil
	sims[1].mu.Unlock()
	got, err := shard.RunAccumDfrDirect(context.Background(), l, f.direct())
	require.NoError(t, err)
	requireAccumEqual(t, f.wantDirect(t, f.opt), got, "after the cancellation")
}

// TestResidentLanesFallBackToTheSteps: when one replica does not accept the
// task (here: wedge collection, or a refusing replica) the call runs the
// step protocol, with the same result.
func TestResidentLanesFallBackToTheSteps(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 600, 3)
	l, c, sims, log := residentLayer(t, f, 2, rfDevices(2), shard.Options{MinLanesPerDevice: 1})
	sims[1].mu.Lock()
	sims[1].refuse = true
	sims[1].mu.Unlock()
	got, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
	require.NoError(t, err)
	requireAccumEqual(t, f.wantDirect(t, f.opt), got, "step protocol")
	require.Empty(t, log.take())
	require.Positive(t, c.Stats(1).Launches)
	require.Positive(t, c.Stats(0).Results)

	sims[1].mu.Lock()
	sims[1].refuse = false
	sims[1].mu.Unlock()
	ro := f.ropt
	ro.CollectWedges, ro.WedgeCapacity = true, 64
	task := f.reflections()
	task.Options = ro
	gotR, err := shard.RunAccumulateReflections(ctx, l, task)
	require.NoError(t, err)
	requireReflEqual(t, f.wantReflections(t, ro), gotR, "wedge collection")
	require.Empty(t, log.take())
}

// TestResidentLanesConcurrentCalls: concurrent calls on one layer claim the
// replicas in a fixed order (no deadlock) and each gets its own result.
func TestResidentLanesConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 2000, 400, 3)
	l, _, _, _ := residentLayer(t, f, 3, rfDevices(3), shard.Options{MinLanesPerDevice: 1, ChunkRays: 256})
	wantD, wantR := f.wantDirect(t, f.opt), f.wantReflections(t, f.ropt)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				got, err := shard.RunAccumDfrDirect(ctx, l, f.direct())
				if err == nil && !equalCounters(accumCounters(wantD), accumCounters(got)) {
					err = errors.New("accum_dfr_direct counters differ")
				}
				errs <- err
				return
			}
			got, err := shard.RunAccumulateReflections(ctx, l, f.reflections())
			if err == nil && got.ReflectionCount != wantR.ReflectionCount {
				err = errors.New("reflection counts differ")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestResidentLanesReuseInputsByContent: the replicas see a call's inputs
// as unchanged only when their contents and the geometry version are: a
// repeated call reuses them, a state changed in place, a new material or
// a mutation of the scene does not.
func TestResidentLanesReuseInputsByContent(t *testing.T) {
	ctx := context.Background()
	f := newRFFixture(t, testscene.Rand(t), 3000, 600, 3)
	l, _, sims, _ := residentLayer(t, f, 2, rfDevices(2), shard.Options{MinLanesPerDevice: 1})
	reused := func() []int { return []int{sims[0].reused, sims[1].reused} }
	task := f.direct()
	run := func() {
		t.Helper()
		_, err := shard.RunAccumDfrDirect(ctx, l, task)
		require.NoError(t, err)
	}
	run()
	require.Equal(t, []int{0, 0}, reused())
	run()
	require.Equal(t, []int{1, 1}, reused(), "an identical call")
	task.InputKey()            // a key taken by the caller must not outlive a change
	f.states.EdgePos[4] += 0.5 // in place: same slices
	run()
	require.Equal(t, []int{1, 1}, reused(), "a state changed in place")
	f.states.EdgePos[4] -= 0.5
	run()
	require.Equal(t, []int{1, 1}, reused(), "the state changed back")
	run()
	require.Equal(t, []int{2, 2}, reused())
	require.NoError(t, l.Broadcast(ctx, shard.SyncGeometry{}))
	run()
	require.Equal(t, []int{2, 2}, reused(), "a mutation advances the geometry version")
	task.Material = nil
	run()
	require.Equal(t, []int{2, 2}, reused(), "the default material")
}
