package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/shard"
)

// routed wraps a simulated replica as a shard.Router that answers path and
// logs the scatters it is asked for (direct or not) in a shared log.
type routed struct {
	shard.Replica
	path shard.Path
	log  *scatterLog
}

type scatterLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *scatterLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, s)
}

func (r *routed) Route(shard.Task, shard.Transfer) shard.Path { return r.path }

func (r *routed) Scatter(t shard.Task, lo, hi int) (shard.Payload, shard.Event, error) {
	r.log.add("scatter")
	return r.Replica.Scatter(t, lo, hi)
}

func (r *routed) ScatterDirect(t shard.Task, lo, hi int, path shard.Path) (shard.Payload, shard.Event, error) {
	r.log.add("direct:" + string(path))
	return r.Replica.Scatter(t, lo, hi)
}

// routedLayer is newLayer whose remotes answer paths[i-1] (the master is a
// Router too, never asked).
func routedLayer(t *testing.T, o shard.Options, paths ...shard.Path) (*shard.Layer, *scatterLog) {
	t.Helper()
	n := len(paths) + 1
	devs := make([]int, n)
	for i := range devs {
		devs[i] = i
	}
	c := simdev.New(simdev.Config{Devices: n})
	l, err := shard.Plan(devs, c, o)
	require.NoError(t, err)
	log := &scatterLog{}
	inner := c.Builder(0, fixtureMeshes())
	build := func(ctx context.Context, s shard.Slot) (shard.Replica, error) {
		r, err := inner(ctx, s)
		if err != nil || s.Master() {
			return &routed{Replica: r, path: "master", log: log}, err
		}
		return &routed{Replica: r, path: paths[s.Index-1], log: log}, nil
	}
	require.NoError(t, l.Build(context.Background(), build))
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l, log
}

// When every remote runs peer-direct the call is one launch per shard, the
// remotes' first, and records the path; results stay bitwise the single
// reference.
func TestDirectRemotesRunOneLaunchPerShardRemotesFirst(t *testing.T) {
	s := reference(t)
	b := newBatch(1500, 5)
	for _, c := range []struct {
		paths []shard.Path
		want  shard.Path
	}{
		{[]shard.Path{shard.PathPeerDirect}, shard.PathPeerDirect},
		{[]shard.Path{shard.PathCompact, shard.PathCompact}, shard.PathCompact},
		{[]shard.Path{shard.PathCompact, shard.PathPeerDirect}, shard.PathPeerDirect},
	} {
		l, log := routedLayer(t, shard.Options{MinRaysPerDevice: 16}, c.paths...)
		got, err := shard.RunRows(context.Background(), l, intersectTask(b, geom.FlagsAll))
		require.NoError(t, err)
		want, err := s.Intersect(b.o, b.d, b.tmax, b.active, geom.FlagsAll)
		require.NoError(t, err)
		requireHitsBitwise(t, want, got)
		rec := l.LastDispatch()
		assert.Equal(t, shard.ModeSharded, rec.Mode)
		assert.Equal(t, c.want, rec.Path)
		require.Len(t, log.entries, len(c.paths)+1, "one scatter per shard")
		for _, e := range log.entries[:len(c.paths)] {
			assert.Equal(t, "direct:"+string(c.want), e, "a remote shard was not issued direct, first")
		}
		assert.Equal(t, "scatter", log.entries[len(c.paths)], "the master's shard is not last")
		assert.Equal(t, len(c.paths)+1, l.LastChunkPlan().ChunkCount)
	}
}

// One remote on the copy path, or a chunking knob, keeps every remote on
// the copy path (pipelined or chunked).
func TestCopyPathWinsOverDirect(t *testing.T) {
	b := newBatch(1500, 6)
	for _, c := range []struct {
		o     shard.Options
		paths []shard.Path
		mode  shard.Mode
	}{
		{shard.Options{MinRaysPerDevice: 16}, []shard.Path{shard.PathPeerDirect, shard.PathCopy}, shard.ModePipelined},
		{shard.Options{ChunkRays: 100}, []shard.Path{shard.PathPeerDirect}, shard.ModeChunked},
	} {
		l, log := routedLayer(t, c.o, c.paths...)
		_, err := shard.RunRows(context.Background(), l, intersectTask(b, geom.FlagsAll))
		require.NoError(t, err)
		assert.Equal(t, c.mode, l.LastDispatch().Mode)
		assert.Equal(t, shard.PathCopy, l.LastDispatch().Path)
		assert.NotContains(t, log.entries, "direct:"+string(shard.PathPeerDirect))
	}
	// A call that stays on the master names no path.
	l, _ := routedLayer(t, shard.Options{}, shard.PathPeerDirect)
	_, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(10, 1), geom.FlagsAll))
	require.NoError(t, err)
	assert.Equal(t, shard.ModeMaster, l.LastDispatch().Mode)
	assert.Empty(t, l.LastDispatch().Path)
}

// The layer records the driver calls its counter saw during the call.
func TestDispatchRecordsTheCallsOfTheCall(t *testing.T) {
	l, _ := newLayer(t, 2, []int{0, 1}, shard.Options{MinRaysPerDevice: 16})
	var calls, binds int64
	l.SetCallCounter(func() (int64, int64) {
		calls += 7 // every reading advances: the record is the difference
		binds += 3
		return calls, binds
	})
	_, err := shard.RunRows(context.Background(), l, intersectTask(newBatch(100, 2), geom.FlagsAll))
	require.NoError(t, err)
	assert.Equal(t, int64(7), l.LastDispatch().DriverCalls)
	assert.Equal(t, int64(3), l.LastDispatch().ContextBinds)
}

func TestTransferOptionIsValidated(t *testing.T) {
	_, err := shard.Plan([]int{0, 1}, simdev.New(simdev.Config{Devices: 2}), shard.Options{Transfer: "carrier-pigeon"})
	var oe *shard.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "Transfer", oe.Field)
	assert.ErrorIs(t, err, geom.ErrInvalidArgument)
	for _, tr := range []shard.Transfer{shard.TransferAuto, shard.TransferPeerDirect, shard.TransferCompact, shard.TransferCopy} {
		_, err := shard.Plan([]int{0, 1}, simdev.New(simdev.Config{Devices: 2}), shard.Options{Transfer: tr})
		assert.NoError(t, err, tr)
	}
}
