package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/shard"
)

// An injected launch failure on the remote replica — at the call or
// through its event — fails every new operation with a *ReplicaError that
// names the remote's device and the operation; the master's launches are
// untouched (on one device too: the fault targets the remote's slot), the
// layer is not poisoned, nothing leaks and the next call equals the
// reference.
func TestRowOpsRemoteLaunchFault(t *testing.T) {
	for _, cfg := range []struct {
		devices []int
		remote  string // how the failing replica names itself
	}{
		{[]int{0, 1}, "cuda:1 slot 1 launch"},
		{[]int{0, 0}, "cuda:0 slot 1 launch"},
	} {
		t.Run(deviceName(cfg.devices), func(t *testing.T) {
			r := testscene.Rand(t)
			dev := cfg.devices[1]
			l, c := rowLayer(t, cfg.devices, shard.Options{AllowSameDevice: dev == 0, MinRaysPerDevice: 1})
			s := newSingle(t)
			in := newRowInputs(r, s, 100+r.IntN(100))
			for i, op := range rowOps(t, s, in) {
				async := i%2 == 1
				c.ResetStats()
				c.Inject(simdev.Fault{Device: dev, Slots: []int{1}, Stage: simdev.StageLaunch, Nth: 1 + r.IntN(2), Async: async})
				_, err := op.run(context.Background(), l)
				require.ErrorIs(t, err, simdev.ErrInjected, op.key)
				require.ErrorIs(t, err, shard.ErrReplica, op.key)
				require.NotErrorIs(t, err, shard.ErrPoisoned, op.key)
				var re *shard.ReplicaError
				require.ErrorAs(t, err, &re)
				require.Equal(t, dev, re.Device, op.key)
				require.Equal(t, op.key, re.Operation)
				if !async {
					require.Equal(t, "launch", re.Stage, op.key) // an asynchronous failure surfaces when its chunk retires
				}
				require.ErrorContains(t, err, fmt.Sprintf("on cuda:%d (%s, rows [", dev, op.key))
				require.ErrorContains(t, err, cfg.remote)
				require.NoError(t, l.Poisoned())
				require.Zero(t, c.LivePayloads(), op.key)
				master := c.SlotStats(0, 0)
				require.Equal(t, master.Enters, master.Exits, "%s: the call ended on every replica", op.key)

				c.ClearFaults()
				got, err := op.run(context.Background(), l)
				require.NoError(t, err, op.key)
				op.check(t, got)
			}
		})
	}
}
