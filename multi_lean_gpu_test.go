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
	r := rand.New(rand.NewPCG(rand.Uint64(), 19))
	meshes := []rayd.Mesh{testscene.Soup(r, 20000, 0.02)}
	s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1024, AllowSameDevice: same, Weights: []float64{1, 1},
			Transfer: tr}))
	require.NoError(t, err)
	defer s.Close()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, _ := testscene.RandomRays(r, tb, 100003)
	rays := rayd.Rays{Origins: o, Directions: d}
	dr, err := s.UploadRays(ctx, rays)
	require.NoError(t, err)
	defer dr.Close()
	dh, err := s.AllocHits(rays.Len(), rayd.FlagsAll)
	require.NoError(t, err)
	defer dh.Close()
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
			for range 3 { // warm: the first calls may fill the pools
				require.NoError(t, call())
			}
			ev0, al0 := launch.DriverCreations()
			for i := range 5 {
				require.NoError(t, call())
				rec := s.LastDispatch()
				require.NotNil(t, rec)
				want := shard.PathPeerDirect
				if name == "intersect" && tr == shard.TransferCompact {
					want = shard.PathCompact
				}
				assert.Equal(t, want, rec.Path)
				assert.LessOrEqual(t, rec.DriverCalls, int64(20), "call %d made %d driver calls", i, rec.DriverCalls)
				assert.Positive(t, rec.DriverCalls, "the driver calls were not counted")
				t.Logf("%s: %d driver calls, %d context binds", name, rec.DriverCalls, rec.ContextBinds)
			}
			ev1, al1 := launch.DriverCreations()
			assert.Equal(t, ev0, ev1, "steady-state calls created events")
			assert.Equal(t, al0, al1, "steady-state calls allocated device memory")
		})
	}
}

// The copy path (forced for device calls, and the host calls' own path)
// reuses its staging: steady-state calls allocate nothing and create no
// event.
func TestGPUReplicatedCopyPathReusesItsStaging(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(rand.Uint64(), 23))
	meshes := []rayd.Mesh{testscene.Soup(r, 20000, 0.02)}
	s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...), rayd.WithMultiDevice(rayd.MultiDeviceOptions{
		MinRaysPerDevice: 1024, AllowSameDevice: same, Transfer: shard.TransferCopy}))
	require.NoError(t, err)
	defer s.Close()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, _ := testscene.RandomRays(r, tb, 100003)
	rays := rayd.Rays{Origins: o, Directions: d}
	dr, err := s.UploadRays(ctx, rays)
	require.NoError(t, err)
	defer dr.Close()
	dh, err := s.AllocHits(rays.Len(), rayd.FlagsAll)
	require.NoError(t, err)
	defer dh.Close()
	calls := map[string]func() error{
		"device intersect": func() error { return s.IntersectInto(ctx, dr, dh) },
		"host intersect": func() error {
			_, err := s.Intersect(ctx, rays, rayd.FlagsAll)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			for range 3 { // warm: the first calls fill the staging
				require.NoError(t, call())
			}
			ev0, al0 := launch.DriverCreations()
			for range 5 {
				require.NoError(t, call())
				rec := s.LastDispatch()
				require.NotNil(t, rec)
				assert.Equal(t, shard.PathCopy, rec.Path)
				assert.Positive(t, rec.DriverCalls, "the driver calls were not counted")
				t.Logf("%s: %s, %d driver calls, %d context binds", name, rec.Mode, rec.DriverCalls, rec.ContextBinds)
			}
			ev1, al1 := launch.DriverCreations()
			assert.Equal(t, ev0, ev1, "steady-state calls created events")
			assert.Equal(t, al0, al1, "steady-state calls allocated device memory")
		})
	}
}
