package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/shard"
)

// streamDevices are the device lists of the streaming tests: two devices
// and one device named twice.
var streamDevices = [][]int{{0, 1}, {0, 0}}

// issueStarts is the documented issue order of a chunked call (Options.
// Offload): each shard cut into chunks of size rows, interleaved round-robin
// by chunk index across the shards in device order, ascending within one.
func issueStarts(shards []shard.Shard, size int) []int {
	var out []int
	for k := 0; ; k++ {
		more := false
		for _, sh := range shards {
			if lo := sh.Start + k*size; lo < sh.Stop {
				out = append(out, lo)
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// Under Offload every new operation streams its chunks through the hook in
// issue order, every row exactly once, each chunk its operation's own
// record type; the call returns the zero result and the chunks, assembled
// by the task, equal the single reference (the backward passes' vertex
// partials summed by Assemble).
func TestRowOpsOffload(t *testing.T) {
	for _, devices := range streamDevices {
		t.Run(deviceName(devices), func(t *testing.T) {
			r := testscene.Rand(t)
			var c collector
			size := 13 + r.IntN(20)
			l, cl := rowLayer(t, devices, shard.Options{AllowSameDevice: devices[0] == devices[1], ChunkRays: size, Offload: c.hook})
			s := newSingle(t)
			in := newRowInputs(r, s, 100+r.IntN(150))
			for _, op := range rowOps(t, s, in) {
				c = collector{}
				got, err := op.run(context.Background(), l)
				require.NoError(t, err, op.key)
				require.Nil(t, got, "%s: a streamed operation returns nothing", op.key)
				d := l.LastDispatch()
				require.Equal(t, shard.ModeChunked, d.Mode)
				require.Len(t, d.Shards, 2)
				require.Equal(t, size, l.LastChunkPlan().ChunkRays)
				require.Equal(t, issueStarts(d.Shards, size), c.starts, "%s: chunks in issue order", op.key)
				op.check(t, op.join(t, c.starts, c.chunks))
				require.Zero(t, cl.LivePayloads())
			}
		})
	}
}

// Cancellation at a chunk boundary: the hook cancels after its second
// chunk; the call ends with an error wrapping context.Canceled, no further
// chunk reaches the hook, nothing leaks, the layer is not poisoned and the
// same call then streams the whole reference.
func TestRowOpsCancelAtAChunkBoundary(t *testing.T) {
	for _, devices := range streamDevices {
		t.Run(deviceName(devices), func(t *testing.T) {
			r := testscene.Rand(t)
			var (
				c      collector
				cancel context.CancelFunc
			)
			hook := func(start int, chunk any) error {
				if err := c.hook(start, chunk); err != nil {
					return err
				}
				if len(c.starts) == 2 && cancel != nil {
					cancel()
				}
				return nil
			}
			l, cl := rowLayer(t, devices, shard.Options{AllowSameDevice: devices[0] == devices[1], ChunkRays: 11, Offload: hook})
			s := newSingle(t)
			in := newRowInputs(r, s, 120+r.IntN(100))
			for _, op := range rowOps(t, s, in) {
				c = collector{}
				var ctx context.Context
				ctx, cancel = context.WithCancel(context.Background())
				_, err := op.run(ctx, l)
				require.ErrorIs(t, err, context.Canceled, op.key)
				require.ErrorContains(t, err, op.key+" cancelled at chunk boundary")
				require.Equal(t, issueStarts(l.LastDispatch().Shards, 11)[:2], c.starts, "%s: nothing after the cancel", op.key)
				require.Zero(t, cl.LivePayloads(), op.key)
				require.NoError(t, l.Poisoned())

				c, cancel = collector{}, nil
				_, err = op.run(context.Background(), l)
				require.NoError(t, err, op.key)
				op.check(t, op.join(t, c.starts, c.chunks))
			}
		})
	}
}

func deviceName(devices []int) string {
	if devices[0] == devices[1] {
		return "same-device"
	}
	return "two-devices"
}
