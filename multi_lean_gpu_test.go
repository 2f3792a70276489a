package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// leanScene is a replicated scene of a 20,000-triangle soup on devs (one
// device named twice when same), equal weights and transfer tr, with
// 100,003 random rays on the host and on the master and a full intersect
// record; everything closes with the test.
func leanScene(t *testing.T, devs []int, same bool, tr shard.Transfer, seed uint64) (*rayd.Scene, rayd.Rays, *rayd.DeviceRays, *rayd.DeviceHits) {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), seed))
	meshes := []rayd.Mesh{testscene.Soup(r, 20000, 0.02)}
	s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...), rayd.WithMultiDevice(rayd.MultiDeviceOptions{
		MinRaysPerDevice: 1024, AllowSameDevice: same, Weights: []float64{1, 1}, Transfer: tr}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, _ := testscene.RandomRays(r, tb, 100003)
	rays := rayd.Rays{Origins: o, Directions: d}
	dr, err := s.UploadRays(ctx, rays)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dr.Close() })
	dh, err := s.AllocHits(rays.Len(), rayd.FlagsAll)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dh.Close() })
	return s, rays, dr, dh
}

// steadyState warms call up (the first calls may fill the event pools and
// the staging), then runs it five times, checking each call's dispatch
// record with check, and asserts that those calls created no event and
// allocated no device memory.
func steadyState(t *testing.T, s *rayd.Scene, call func() error, check func(i int, rec *rayd.DispatchRecord)) {
	t.Helper()
	for range 3 {
		require.NoError(t, call())
	}
	ev0, al0 := launch.DriverCreations()
	for i := range 5 {
		require.NoError(t, call())
		rec := s.LastDispatch()
		require.NotNil(t, rec)
		assert.Positive(t, rec.DriverCalls, "the driver calls were not counted")
		check(i, rec)
		t.Logf("%s, %s: %d driver calls, %d context binds", rec.Operation, rec.Mode, rec.DriverCalls, rec.ContextBinds)
	}
	ev1, al1 := launch.DriverCreations()
	assert.Equal(t, ev0, ev1, "steady-state calls created events")
	assert.Equal(t, al0, al1, "steady-state calls allocated device memory")
}

// A steady-state device fast-path call on two replicas takes the
// peer-direct (or, for intersect, the compact) path with at most 20 driver
// calls, creates no event and allocates nothing.
func TestGPUReplicatedSteadyStateIsLean(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	for _, tr := range []shard.Transfer{shard.TransferPeerDirect, shard.TransferCompact} {
		t.Run(string(tr), func(t *testing.T) { steadyStateIsLean(t, devs, same, tr) })
	}
}

func steadyStateIsLean(t *testing.T, devs []int, same bool, tr shard.Transfer) {
	ctx := context.Background()
	s, rays, dr, dh := leanScene(t, devs, same, tr, 19)
	refl, err := s.AllocReflections(rays.Len(), 1, true)
	require.NoError(t, err)
	defer refl.Close()
	vis, err := s.AllocVisible(rays.Len())
	require.NoError(t, err)
	defer vis.Close()
	calls := map[string]func() error{
		"intersect":           func() error { return s.IntersectInto(ctx, dr, dh) },
		"trace_reflections:1": func() error { return s.TraceReflectionsInto(ctx, dr, refl) },
		"visible":             func() error { return s.VisibleInto(ctx, dr, vis) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			want := shard.PathPeerDirect
			if name == "intersect" && tr == shard.TransferCompact {
				want = shard.PathCompact
			}
			steadyState(t, s, call, func(i int, rec *rayd.DispatchRecord) {
				assert.Equal(t, want, rec.Path)
				assert.LessOrEqual(t, rec.DriverCalls, int64(20), "call %d made %d driver calls", i, rec.DriverCalls)
			})
		})
	}
}

// The copy path (forced for device calls, and the host calls' own path)
// reuses its staging: steady-state calls allocate nothing and create no
// event.
func TestGPUReplicatedCopyPathReusesItsStaging(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	s, rays, dr, dh := leanScene(t, devs, same, shard.TransferCopy, 23)
	calls := map[string]func() error{
		"device intersect": func() error { return s.IntersectInto(ctx, dr, dh) },
		"host intersect": func() error {
			_, err := s.Intersect(ctx, rays, rayd.FlagsAll)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			steadyState(t, s, call, func(_ int, rec *rayd.DispatchRecord) {
				assert.Equal(t, shard.PathCopy, rec.Path)
			})
		})
	}
}
