package simdev_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/shard"
)

// Two replicas on one device (a layer over [0, 0]): each knows its slot,
// the step log names it, the device's counters are the sum of the slots'
// and a fault aimed at one slot leaves the other alone.
func TestSameDeviceSlots(t *testing.T) {
	ctx := context.Background()
	c := simdev.New(simdev.Config{Devices: 1})
	l, err := shard.Plan([]int{0, 0}, c, shard.Options{AllowSameDevice: true, MinRaysPerDevice: 1, DisablePipeline: true})
	require.NoError(t, err)
	require.NoError(t, l.Build(ctx, c.Builder(0, meshes())))
	defer l.Close()
	reps, err := l.Replicas()
	require.NoError(t, err)
	for i, r := range reps {
		require.Equal(t, i, r.(*simdev.Replica).Slot())
		require.Equal(t, 0, r.Device())
	}

	c.ResetStats()
	tk := task(200)
	got, err := shard.RunRows(ctx, l, tk)
	require.NoError(t, err)
	want, err := refScene(t, meshes()).Intersect(tk.O, tk.D, nil, nil, geom.FlagsAll)
	require.NoError(t, err)
	require.Equal(t, want, got)
	var launches []simdev.Step
	for _, s := range c.Log() {
		if s.Stage == simdev.StageLaunch {
			launches = append(launches, s)
		}
	}
	require.Equal(t, []simdev.Step{{Device: 0, Slot: 0, Stage: simdev.StageLaunch, Start: 0, Stop: 100},
		{Device: 0, Slot: 1, Stage: simdev.StageLaunch, Start: 100, Stop: 200}}, launches)
	master, remote, all := c.SlotStats(0, 0), c.SlotStats(0, 1), c.Stats(0)
	require.Equal(t, 1, master.Launches)
	require.Equal(t, 1, remote.Launches)
	require.Zero(t, master.BytesIn+master.BytesOut, "the master reads the caller's rows")
	require.Equal(t, int64(100*24), remote.BytesIn)
	require.Equal(t, int64(100*76), remote.BytesOut)
	require.Equal(t, simdev.Stats{Enters: master.Enters + remote.Enters, Exits: master.Exits + remote.Exits,
		Scatters: master.Scatters + remote.Scatters, Launches: 2, Gathers: master.Gathers + remote.Gathers,
		Results: master.Results + remote.Results, RowsLaunched: 200, BytesIn: remote.BytesIn, BytesOut: remote.BytesOut}, all)

	for _, slot := range []int{1, 0} {
		c.Inject(simdev.Fault{Device: 0, Slots: []int{slot}, Stage: simdev.StageLaunch, Nth: 1})
		_, err = shard.RunRows(ctx, l, tk)
		require.ErrorIs(t, err, simdev.ErrInjected)
		require.ErrorContains(t, err, []string{"cuda:0 slot 0 launch", "cuda:0 slot 1 launch"}[slot])
		_, err = shard.RunRows(ctx, l, tk)
		require.NoError(t, err, "the fault fired once, on its slot")
		c.ClearFaults()
	}
}

// Replicas on one device share its modelled engines: two launches there
// take twice as long as one, where two devices overlap them.
func TestSameDeviceSharesTheDevice(t *testing.T) {
	for _, cfg := range []struct {
		second int
		want   time.Duration
	}{{0, 20 * time.Microsecond}, {1, 10 * time.Microsecond}} {
		c := simdev.New(simdev.Config{Devices: 2, RowNanos: 10})
		m, err := c.NewSlotReplica(shard.Slot{Index: 0, Device: 0}, meshes())
		require.NoError(t, err)
		r, err := c.NewSlotReplica(shard.Slot{Index: 1, Device: cfg.second}, meshes())
		require.NoError(t, err)
		tk := task(1000)
		c.ResetStats()
		var wait []func()
		for _, rep := range []*simdev.Replica{m, r} {
			in, ev, err := rep.Scatter(tk, 0, 1000)
			require.NoError(t, err)
			out, ev, err := rep.Launch(tk, in, 0, 1000, ev)
			require.NoError(t, err)
			wait = append(wait, func() { _, _ = m.Result(tk, out, ev); in.Release(); out.Release() })
		}
		for _, w := range wait {
			w()
		}
		require.Equal(t, cfg.want, c.Elapsed(), "second replica on cuda:%d", cfg.second)
		require.NoError(t, m.Close())
		require.NoError(t, r.Close())
		require.Zero(t, c.LivePayloads())
	}
}
