package replica_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// floor is the MinRaysPerDevice of the parity tests: 2047 rows stay on the
// master (the remote would get 1024), 4095 and more are sharded.
const floor = 2048

var paritySizes = []int{0, 1, 2047, 4095, 4097, 100_003}

// parityModes are the executor configurations every operation is checked
// under.
var parityModes = []struct {
	name string
	opts shard.Options
}{
	{"pipelined", shard.Options{MinRaysPerDevice: floor}},
	{"pipelined-1:3", shard.Options{MinRaysPerDevice: floor, Weights: []float64{1, 3}}},
	{"pipelined-8-chunks", shard.Options{MinRaysPerDevice: floor, PipelineChunksPerDevice: 8}},
	{"sharded", shard.Options{MinRaysPerDevice: floor, DisablePipeline: true}},
	{"chunked-777", shard.Options{ChunkRays: 777}},
	{"budget-16MiB", shard.Options{MemoryBudgetBytes: 16 << 20}},
}

// reference holds the one-device answers for one batch.
type reference struct {
	b              batch
	all, none, geo *geom.Hits
	refl1, refl4   *geom.Reflections
	vis            []bool
}

const geoUV = geom.FlagGeometric | geom.FlagUV

func (f *fixture) reference(t *testing.T, n int) *reference {
	b := f.batch(t, n)
	return &reference{b: b, all: f.ref.intersect(b, geom.FlagsAll), none: f.ref.intersect(b, geom.FlagsNone),
		geo: f.ref.intersect(b, geoUV), refl1: f.ref.reflect(b, 1), refl4: f.ref.reflect(b, 4), vis: f.ref.visible(b)}
}

// runHost runs every host operation of ref through the layer and compares.
func runHost(t *testing.T, ctx context.Context, l *shard.Layer, what string, ref *reference) {
	t.Helper()
	b := ref.b
	for _, c := range []struct {
		flags geom.Flags
		want  *geom.Hits
	}{{geom.FlagsAll, ref.all}, {geom.FlagsNone, ref.none}, {geoUV, ref.geo}} {
		got, err := shard.RunRows(ctx, l, &shard.Intersect{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Flags: c.flags})
		require.NoError(t, err, what)
		sameHits(t, fmt.Sprintf("%s intersect %v (%s)", what, c.flags, l.LastDispatch().Mode), got, c.want)
	}
	for _, c := range []struct {
		bounces int
		want    *geom.Reflections
	}{{1, ref.refl1}, {4, ref.refl4}} {
		got, err := shard.RunRows(ctx, l, &shard.TraceReflections{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Bounces: c.bounces})
		require.NoError(t, err, what)
		sameRefl(t, fmt.Sprintf("%s trace_reflections:%d (%s)", what, c.bounces, l.LastDispatch().Mode), got, c.want)
	}
	got, err := shard.RunRows(ctx, l, &shard.Visible{Start: b.o, End: b.d, Active: b.active})
	require.NoError(t, err, what)
	sameBools(t, fmt.Sprintf("%s visible (%s)", what, l.LastDispatch().Mode), got, ref.vis)
}

// TestGPUHostTasksMatchOneDevice: every host operation, at batch sizes
// below and above the floor (odd ones included), in every executor mode,
// is bitwise the single-device accel answer.
func TestGPUHostTasksMatchOneDevice(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	refs := make([]*reference, len(paritySizes))
	for i, n := range paritySizes {
		refs[i] = f.reference(t, n)
	}
	for _, m := range parityModes {
		t.Run(m.name, func(t *testing.T) {
			l, reps := f.layer(t, m.opts)
			for i, n := range paritySizes {
				runHost(t, ctx, l, fmt.Sprintf("%s N=%d", m.name, n), refs[i])
				mode := l.LastDispatch().Mode
				switch {
				case m.opts.ChunkRays > 0 || m.opts.MemoryBudgetBytes > 0:
					assert.Equal(t, shard.ModeChunked, mode, "N=%d", n)
				case n <= 2047:
					assert.Equal(t, shard.ModeMaster, mode, "N=%d", n)
				case n == 100_003 && m.opts.DisablePipeline:
					assert.Equal(t, shard.ModeSharded, mode, "N=%d", n)
				case n == 100_003:
					assert.Equal(t, shard.ModePipelined, mode, "N=%d", n)
				}
			}
			assert.Positive(t, reps[1].Stats().Rows, "the remote never ran")
			assert.Positive(t, reps[1].Stats().Gathered, "the remote never gathered")
			assert.Equal(t, reps[0].Version(), reps[1].Version())
		})
	}
}

// TestGPUDefaultFloorBoundary: with the default floor, 524,286 rows stay on
// the master and 524,287 are sharded (the remote gets 262,144), both
// bitwise the one-device answer.
func TestGPUDefaultFloorBoundary(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	l, _ := f.layer(t, shard.Options{})
	for _, c := range []struct {
		n    int
		mode shard.Mode
	}{{524_286, shard.ModeMaster}, {524_287, shard.ModePipelined}} {
		b := f.batch(t, c.n)
		want := f.ref.intersect(b, geom.FlagsNone)
		got, err := shard.RunRows(ctx, l, &shard.Intersect{O: b.o, D: b.d, TMax: b.tmax, Active: b.active, Flags: geom.FlagsNone})
		require.NoError(t, err)
		sameHits(t, fmt.Sprintf("N=%d", c.n), got, want)
		assert.Equal(t, c.mode, l.LastDispatch().Mode, "N=%d", c.n)
	}
}

// TestGPUDeviceTasksMatchOneDevice: the device-resident tasks (inputs and
// outputs in master buffers; remotes working on them in place, or fed by
// peer copies when the copy path is forced) give the same bits, written in
// place into the caller's output record, with and without a caller stream.
func TestGPUDeviceTasksMatchOneDevice(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	md, err := f.src.Device(0)
	require.NoError(t, err)
	caller, err := md.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = caller.Close() })
	for _, m := range parityModes {
		if m.opts.Weights != nil || m.opts.PipelineChunksPerDevice != 0 {
			continue
		}
		for _, tr := range []shard.Transfer{shard.TransferAuto, shard.TransferCompact, shard.TransferCopy} {
			t.Run(m.name+"/"+string(tr), func(t *testing.T) {
				o := m.opts
				o.Transfer = tr
				l, reps := f.layer(t, o)
				for _, n := range []int{0, 1, 2047, 100_003} {
					ref := f.reference(t, n)
					for _, s := range []*launch.Stream{caller, nil} {
						what := fmt.Sprintf("%s N=%d stream=%v", m.name, n, s != nil)
						runDevice(t, ctx, l, md, caller, s, what, ref)
						if rec := l.LastDispatch(); n == 100_003 && tr != shard.TransferCopy && !l.Chunked() {
							assert.True(t, rec.Path.Direct(), "%s: path %q", what, rec.Path)
							assert.Equal(t, shard.ModeSharded, rec.Mode, what)
						}
					}
				}
				assert.Positive(t, reps[1].Stats().Rows, "the remote never ran")
				if tr == shard.TransferCopy || l.Chunked() {
					assert.Positive(t, reps[1].Stats().Scattered, "the remote never received a peer copy")
				} else {
					st := reps[1].Stats()
					assert.Zero(t, st.Scattered+st.Gathered, "a peer-direct remote copied rows")
				}
			})
		}
	}
}

// runDevice runs the device tasks of ref's batch on the layer; the inputs
// are produced on caller, and read back on it.
func runDevice(t *testing.T, ctx context.Context, l *shard.Layer, md *launch.Device, caller, s *launch.Stream, what string, ref *reference) {
	t.Helper()
	n := len(ref.b.o) / 3
	rays := deviceRays(t, caller, ref.b)
	if s == nil {
		require.NoError(t, caller.Synchronize()) // no stream: inputs complete before the call
	}
	for _, c := range []struct {
		flags geom.Flags
		want  *geom.Hits
	}{{geom.FlagsAll, ref.all}, {geom.FlagsNone, ref.none}} {
		out := hitsBuffers(t, md, n)
		got, err := shard.RunRows(ctx, l, &replica.DeviceIntersect{Rays: rays, Flags: c.flags, Out: out, Stream: s})
		require.NoError(t, err, what)
		assert.Equal(t, out.T.Addr(), got.T.Addr(), "%s: the result is not the caller's record", what)
		sameHits(t, fmt.Sprintf("%s device intersect %v (%s)", what, c.flags, l.LastDispatch().Mode),
			hostHits(t, caller, out, n, c.flags), c.want)
	}
	out := reflBuffers(t, md, n, 4)
	_, err := shard.RunRows(ctx, l, &replica.DeviceReflections{Rays: rays, Bounces: 4, Out: out, Stream: s})
	require.NoError(t, err, what)
	sameRefl(t, what+" device trace_reflections:4", hostRefl(t, caller, out, n, 4), ref.refl4)
	vis := alloc[uint8](t, md, n)
	seg := accel.Segments{Start: rays.O, End: rays.D, Active: rays.Active, N: n}
	_, err = shard.RunRows(ctx, l, &replica.DeviceVisible{Segments: seg, Out: vis, Stream: s})
	require.NoError(t, err, what)
	sameBools(t, what+" device visible", boolsOf(fetch(t, caller, vis, n)), ref.vis)
}
