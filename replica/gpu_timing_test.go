package replica_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// TestGPUTimingComputeBound logs (and does not assert) the wall time of a
// compute-bound batch (the benchmark's 2.1M-triangle cloud, incoherent
// rays, 4 bounces) on the master alone (weights [1 0]) and pipelined over
// two devices (two replicas of one device on a one-GPU machine: the
// layer's fixed cost, not a speed-up), for host tasks and for device-resident tasks (no host
// transfers), so that the overlap can be read off the log.
func TestGPUTimingComputeBound(t *testing.T) {
	if testing.Short() {
		t.Skip("timing run skipped in -short mode")
	}
	devices := replicated(t)
	ctx := context.Background()
	src := replica.NewSource(replica.Options{})
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	cfg := workload.Compute // 4,194,304 rays, as in the benchmark
	mesh, o, d := cfg.Build()
	meshes := []geom.Mesh{mesh}
	n := len(o) / 3

	md, err := src.Device(0)
	require.NoError(t, err)
	caller, err := md.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = caller.Close() })
	rays := deviceRays(t, caller, batch{o: o, d: d})
	out := reflBuffers(t, md, n, cfg.MaxBounces)
	require.NoError(t, caller.Synchronize())

	layers := map[string]*shard.Layer{}
	for _, c := range []struct {
		name    string
		weights []float64
	}{{"master only", []float64{1, 0}}, {"replicated ", nil}} {
		l, err := shard.Plan(devices, src.Topology(), shard.Options{Weights: c.weights, AllowSameDevice: devices[1] == devices[0]})
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, l.Build(ctx, src.Builder(0, meshes)))
		t.Logf("%s: build of %d triangles on every replica: %v", c.name, cfg.Triangles(), time.Since(start))
		t.Cleanup(func() { _ = l.Close() })
		layers[c.name] = l
	}
	runs := []struct {
		name string
		run  func(l *shard.Layer) error
	}{
		{"host trace_reflections:4", func(l *shard.Layer) error {
			_, err := shard.RunRows(ctx, l, &shard.TraceReflections{O: o, D: d, Bounces: cfg.MaxBounces})
			return err
		}},
		{"host intersect (t only)", func(l *shard.Layer) error {
			_, err := shard.RunRows(ctx, l, &shard.Intersect{O: o, D: d, Flags: geom.FlagsNone})
			return err
		}},
		{"device trace_reflections:4", func(l *shard.Layer) error {
			_, err := shard.RunRows(ctx, l, &replica.DeviceReflections{Rays: rays, Bounces: cfg.MaxBounces, Out: out, Stream: caller})
			if err == nil {
				err = caller.Synchronize()
			}
			return err
		}},
	}
	for _, r := range runs {
		var best [2]time.Duration
		for i, name := range []string{"master only", "replicated "} {
			l := layers[name]
			require.NoError(t, r.run(l)) // warm the pools and the caches
			best[i] = time.Duration(1 << 62)
			for range 3 {
				start := time.Now()
				require.NoError(t, r.run(l))
				best[i] = min(best[i], time.Since(start))
			}
			t.Logf("%-28s %s: %10v  (%s, %d rows)", r.name, name, best[i], l.LastDispatch().Mode, n)
		}
		t.Logf("%-28s speed-up %.2fx", r.name, float64(best[0])/float64(best[1]))
	}
}
