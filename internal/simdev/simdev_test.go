package simdev_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

func meshes() []geom.Mesh {
	m := workload.GridMesh(4, 2)
	m.Dynamic = true
	return []geom.Mesh{m}
}

func refScene(t *testing.T, ms []geom.Mesh) *ref.Scene {
	t.Helper()
	tables, err := geom.BuildTables(ms)
	require.NoError(t, err)
	s, err := ref.NewScene(tables)
	require.NoError(t, err)
	return s
}

func task(n int) *shard.Intersect {
	o, d := workload.PlaneRays(n, 1)
	return &shard.Intersect{O: o, D: d, Flags: geom.FlagsAll}
}

// run drives one chunk through a replica as the layer does.
func run(t *testing.T, r *simdev.Replica, master *simdev.Replica, tk shard.Task, lo, hi int) (any, error) {
	t.Helper()
	in, ev, err := r.Scatter(tk, lo, hi)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	out, ev, err := r.Launch(tk, in, lo, hi, ev)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	g, ev, err := r.Gather(tk, out, ev)
	if err != nil {
		return nil, err
	}
	defer g.Release()
	return master.Result(tk, g, ev)
}

func TestTopology(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 3, NoPeer: [][2]int{{1, 0}},
		Identities: []shard.Identity{{Name: "A", Major: 8}}})
	require.Equal(t, 3, c.DeviceCount())
	require.True(t, c.CanAccessPeer(0, 1))
	require.False(t, c.CanAccessPeer(1, 0))
	require.Equal(t, shard.Identity{Name: "A", Major: 8}, c.Identity(0))
	require.Equal(t, shard.Identity{Name: "simdev", Major: 9}, c.Identity(2))
	_, err := c.NewReplica(3, false, meshes())
	require.Error(t, err)
	var _ shard.Topology = c
	var _ shard.Replica = (*simdev.Replica)(nil)
}

// Master and remote replicas both give the reference's bits; the remote
// copies its inputs and outputs, the master does not.
func TestReplicasMatchTheReference(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 2})
	m, err := c.NewReplica(0, true, meshes())
	require.NoError(t, err)
	r, err := c.NewReplica(1, false, meshes())
	require.NoError(t, err)
	defer m.Close()
	defer r.Close()
	tk := task(100)
	want, err := refScene(t, meshes()).Intersect(tk.O, tk.D, nil, nil, geom.FlagsAll)
	require.NoError(t, err)
	got, err := run(t, r, m, tk, 0, 100)
	require.NoError(t, err)
	require.Equal(t, want, got)
	got, err = run(t, m, m, tk, 0, 100)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, int64(100*24), c.Stats(1).BytesIn)
	require.Equal(t, int64(100*76), c.Stats(1).BytesOut)
	require.Zero(t, c.Stats(0).BytesIn+c.Stats(0).BytesOut)
	require.Zero(t, c.LivePayloads())
	require.Len(t, c.Log(), 2+4+4, "two builds, then four steps per chunk")
}

func TestFaults(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 2})
	m, _ := c.NewReplica(0, true, meshes())
	r, _ := c.NewReplica(1, false, meshes())
	defer m.Close()
	defer r.Close()
	boom := errors.New("boom")
	c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageLaunch, Nth: 2, Err: boom})
	tk := task(10)
	_, err := run(t, r, m, tk, 0, 10)
	require.NoError(t, err)
	_, err = run(t, r, m, tk, 0, 10)
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "cuda:1 launch")
	_, err = run(t, r, m, tk, 0, 10)
	require.NoError(t, err, "only the 2nd launch fails")
	// An asynchronous failure surfaces through the event and every step
	// that depends on it.
	c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageScatter, Async: true})
	_, err = run(t, r, m, tk, 0, 10)
	require.ErrorIs(t, err, simdev.ErrInjected)
	c.ClearFaults()
	_, err = run(t, r, m, tk, 0, 10)
	require.NoError(t, err)
	// A silent apply leaves the version behind.
	c.Inject(simdev.Fault{Device: 1, Stage: simdev.StageApply, Nth: 1, Silent: true})
	require.NoError(t, r.Apply(shard.SyncGeometry{}))
	require.NoError(t, m.Apply(shard.SyncGeometry{}))
	require.Equal(t, uint64(0), r.Version())
	require.Equal(t, uint64(1), m.Version())
	// Build faults.
	c.Inject(simdev.Fault{Device: 0, Stage: simdev.StageBuild})
	_, err = c.NewReplica(0, true, meshes())
	require.ErrorIs(t, err, simdev.ErrInjected)
	require.Zero(t, c.LivePayloads())
}

func TestMisuseIsRefused(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 1})
	m, _ := c.NewReplica(0, true, meshes())
	tk := task(4)
	in, ev, err := m.Scatter(tk, 0, 4)
	require.NoError(t, err)
	in.Release()
	in.Release() // idempotent
	_, _, err = m.Launch(tk, in, 0, 4, ev)
	require.ErrorIs(t, err, simdev.ErrReleased)
	_, _, err = m.Scatter(struct{ shard.Task }{tk}, 0, 4)
	require.ErrorContains(t, err, "no kernel")
	require.ErrorContains(t, m.Apply(nil), "unknown mutation")
	require.ErrorIs(t, m.Apply(shard.UpdateVertices{Mesh: 0, Vertices: []float32{1}}), geom.ErrInvalidMesh)
	require.Equal(t, uint64(0), m.Version(), "a refused mutation changes nothing")
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	_, _, err = m.Scatter(tk, 0, 4)
	require.ErrorContains(t, err, "closed")
	require.Zero(t, c.LivePayloads())
}

// A mutation enqueued after a launch does not disturb it (stream order),
// and a launch after the mutation sees the new geometry.
func TestMutationsAreStreamOrdered(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 1})
	m, _ := c.NewReplica(0, true, meshes())
	defer m.Close()
	tk := task(50)
	before, err := refScene(t, meshes()).Intersect(tk.O, tk.D, nil, nil, geom.FlagsAll)
	require.NoError(t, err)
	in, ev, _ := m.Scatter(tk, 0, 50)
	out, ev, err := m.Launch(tk, in, 0, 50, ev)
	require.NoError(t, err)
	lifted := meshes()
	for i := 2; i < len(lifted[0].Vertices); i += 3 {
		lifted[0].Vertices[i] = 0.5
	}
	require.NoError(t, m.Apply(shard.UpdateVertices{Mesh: 0, Vertices: lifted[0].Vertices}))
	require.NoError(t, m.Apply(shard.SyncGeometry{}))
	got, err := m.Result(tk, out, ev)
	require.NoError(t, err)
	require.Equal(t, before, got)
	after, err := run(t, m, m, tk, 0, 50)
	require.NoError(t, err)
	want, err := refScene(t, lifted).Intersect(tk.O, tk.D, nil, nil, geom.FlagsAll)
	require.NoError(t, err)
	require.Equal(t, want, after)
	in.Release()
	out.Release()
}

// Modelled time: copies cost bytes/bandwidth, launches rows·RowNanos/speed,
// and independent queues overlap.
func TestModelledTime(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 3, LinkBytesPerSecond: 1e9, RowNanos: 10, Speed: []float64{1, 2, 0.5}})
	m, _ := c.NewReplica(0, true, meshes())
	r1, _ := c.NewReplica(1, false, meshes())
	r2, _ := c.NewReplica(2, false, meshes())
	defer m.Close()
	defer r1.Close()
	defer r2.Close()
	tk := task(1000)
	c.ResetStats()
	_, err := run(t, m, m, tk, 0, 1000)
	require.NoError(t, err)
	require.Equal(t, 10*time.Microsecond, c.Elapsed(), "master: compute only")
	c.ResetStats()
	_, err = run(t, r1, m, tk, 0, 1000)
	require.NoError(t, err)
	// 24 kB in at 1 GB/s, 5 µs of compute at speed 2, 76 kB out.
	require.Equal(t, 24*time.Microsecond+5*time.Microsecond+76*time.Microsecond, c.Elapsed())
	c.ResetStats()
	var wait []func()
	for _, r := range []*simdev.Replica{r1, r2} {
		in, ev, _ := r.Scatter(tk, 0, 1000)
		out, ev, _ := r.Launch(tk, in, 0, 1000, ev)
		wait = append(wait, func() { _, _ = m.Result(tk, out, ev); in.Release(); out.Release() })
	}
	for _, w := range wait {
		w()
	}
	require.Equal(t, 24*time.Microsecond+20*time.Microsecond, c.Elapsed(), "the slow device bounds the overlap")
	require.Zero(t, c.LivePayloads())
}

// A layer over simulated devices: the builder and the topology plug into
// shard.Plan and Layer.Build.
func TestBuilderPlugsIntoALayer(t *testing.T) {
	c := simdev.New(simdev.Config{Devices: 2})
	l, err := shard.Plan([]int{1, 0}, c, shard.Options{MinRaysPerDevice: 1})
	require.NoError(t, err)
	require.NoError(t, l.Build(context.Background(), c.Builder(1, meshes())))
	defer l.Close()
	tk := task(64)
	got, err := shard.RunRows(context.Background(), l, tk)
	require.NoError(t, err)
	want, err := refScene(t, meshes()).Intersect(tk.O, tk.D, nil, nil, geom.FlagsAll)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, int64(32*24), c.Stats(0).BytesIn, "device 0 is the remote here")
	require.Zero(t, c.Stats(1).BytesIn)
}
