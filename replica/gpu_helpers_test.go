package replica_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// fixture is a source, the test scene, the device list of a replicated
// layer and a single-device reference built on the master with accel
// directly.
type fixture struct {
	src     *replica.Source
	meshes  []geom.Mesh
	devices []int
	ref     *single
	rng     *rand.Rand
}

// testMeshes mixes a dynamic grid, a closed sphere with degenerate poles, a
// box and a random soup.
func testMeshes(r *rand.Rand) []geom.Mesh {
	grid := testscene.Grid(48, 3, -0.25)
	grid.Dynamic = true
	return []geom.Mesh{grid, testscene.Sphere([3]float32{0.2, -0.1, 0.4}, 0.35, 24, 12),
		testscene.Box([3]float32{-0.6, 0.5, 0.2}, [3]float32{0.2, 0.3, 0.25}), testscene.Soup(r, 3000, 0.03)}
}

// replicated is the device list of a replicated layer on this machine:
// devices 0 and 1 when two are visible, otherwise two replicas of device 0
// (the second driven as a remote, shard.Options.AllowSameDevice), so that
// every multi-replica test also runs on a one-GPU machine.
func replicated(t *testing.T) []int {
	t.Helper()
	if len(gputest.MustHaveDevices(t, 1)) >= 2 {
		return []int{0, 1}
	}
	return []int{0, 0}
}

// deviceLists are the device lists the operations are checked on: two
// replicas of device 0 always, and devices 0 and 1 when two are visible.
func deviceLists(t *testing.T) [][]int {
	t.Helper()
	lists := [][]int{{0, 0}}
	if len(gputest.MustHaveDevices(t, 1)) >= 2 {
		lists = append(lists, []int{0, 1})
	}
	return lists
}

// distinct returns the devices of a list once each, in order.
func distinct(devices []int) []int {
	var out []int
	for _, d := range devices {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func newFixture(t *testing.T) *fixture { return newFixtureOn(t, replicated(t)) }

// newFixtureOn is a fixture whose layers run on devices.
func newFixtureOn(t *testing.T, devices []int) *fixture {
	t.Helper()
	gputest.MustHaveDevices(t, slices.Max(devices)+1)
	src := replica.NewSource(replica.Options{})
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	f := &fixture{src: src, rng: testscene.Rand(t), devices: devices}
	f.meshes = testMeshes(f.rng)
	f.ref = newSingle(t, src, f.meshes)
	return f
}

// layer plans and builds a layer over the fixture's devices (with
// AllowSameDevice when a device repeats); reps receives the replicas by
// position.
func (f *fixture) layer(t *testing.T, o shard.Options) (*shard.Layer, []*replica.Replica) {
	t.Helper()
	if len(distinct(f.devices)) < len(f.devices) {
		o.AllowSameDevice = true
	}
	l, err := shard.Plan(f.devices, f.src.Topology(), o)
	require.NoError(t, err)
	require.NotNil(t, l)
	reps := make([]*replica.Replica, len(f.devices))
	build := f.src.Builder(0, f.meshes)
	require.NoError(t, l.Build(context.Background(), func(ctx context.Context, slot shard.Slot) (shard.Replica, error) {
		r, err := build(ctx, slot)
		if err != nil {
			return nil, err
		}
		reps[slot.Index] = r.(*replica.Replica)
		return r, nil
	}))
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	for i, r := range reps {
		require.Equal(t, i == 0, r.Master(), "replica %d", i)
	}
	return l, reps
}

// batch is a host ray batch: random rays with tmax, an active mask and a
// few degenerate rows.
type batch struct {
	o, d, tmax []float32
	active     []bool
}

func (f *fixture) batch(t *testing.T, n int) batch {
	t.Helper()
	tb, err := geom.BuildTables(f.meshes)
	require.NoError(t, err)
	o, d, tmax := testscene.RandomRays(f.rng, tb, n)
	b := batch{o: o, d: d, tmax: tmax, active: make([]bool, n)}
	for i := range b.active {
		b.active[i] = i%13 != 7
	}
	nan := float32(math.NaN())
	if n > 3 {
		b.o[0], b.d[5], b.tmax[2] = nan, 0, nan
		b.d[3], b.d[4] = 0, 0
	}
	return b
}

// single is the one-device reference: the same tables and build options on
// the master, queried through accel with plain (non-persistent) launches.
type single struct {
	t   *testing.T
	s   *launch.Stream
	bvh *accel.BVH
}

func newSingle(t *testing.T, src *replica.Source, meshes []geom.Mesh) *single {
	t.Helper()
	d, err := src.Device(0)
	require.NoError(t, err)
	s, err := d.NewStream()
	require.NoError(t, err)
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	bvh, err := accel.Build(s, tb)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Synchronize())
		require.NoError(t, bvh.Close())
		require.NoError(t, s.Close())
	})
	return &single{t: t, s: s, bvh: bvh}
}

// upload copies src to a new buffer of the stream's device (nil for an
// empty optional input).
func upload[T launch.Elem](t testing.TB, s *launch.Stream, src []T, optional bool) *launch.Buffer[T] {
	t.Helper()
	if optional && len(src) == 0 {
		return nil
	}
	b, err := launch.Alloc[T](s.Device(), len(src))
	require.NoError(t, err)
	if len(src) > 0 {
		require.NoError(t, b.Upload(s, src))
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func alloc[T launch.Elem](t testing.TB, d *launch.Device, n int) *launch.Buffer[T] {
	t.Helper()
	b, err := launch.Alloc[T](d, n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func fetch[T launch.Elem](t testing.TB, s *launch.Stream, b *launch.Buffer[T], n int) []T {
	t.Helper()
	out := make([]T, n)
	if n > 0 {
		require.NoError(t, b.Download(s, out))
	}
	return out
}

func bytesOf(v []bool) []uint8 {
	out := make([]uint8, len(v))
	for i, x := range v {
		if x {
			out[i] = 1
		}
	}
	return out
}

func boolsOf(v []uint8) []bool {
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = x != 0
	}
	return out
}

// deviceRays uploads a batch to s's device.
func deviceRays(t testing.TB, s *launch.Stream, b batch) accel.Rays {
	return accel.Rays{O: upload(t, s, b.o, false), D: upload(t, s, b.d, false), TMax: upload(t, s, b.tmax, true),
		Active: upload(t, s, bytesOf(b.active), true), N: len(b.o) / 3}
}

// hitsBuffers allocates a full device hits record of n rows on d.
func hitsBuffers(t testing.TB, d *launch.Device, n int) accel.Hits {
	f := func(per int) *launch.Buffer[float32] { return alloc[float32](t, d, per*n) }
	i := func() *launch.Buffer[int32] { return alloc[int32](t, d, n) }
	return accel.Hits{T: f(1), P: f(3), N: f(3), GeoN: f(3), UV: f(2), Bary: f(3),
		ShapeID: i(), PrimID: i(), LocalPrimID: i(), GlobalPrimID: i()}
}

// hostHits downloads the fields flags selects.
func hostHits(t testing.TB, s *launch.Stream, h accel.Hits, n int, flags geom.Flags) *geom.Hits {
	r := geom.NewHits(n, flags)
	r.T = fetch(t, s, h.T, n)
	if flags.Has(geom.FlagGeometric) {
		r.P, r.GeoN, r.Bary = fetch(t, s, h.P, 3*n), fetch(t, s, h.GeoN, 3*n), fetch(t, s, h.Bary, 3*n)
		r.ShapeID, r.PrimID = fetch(t, s, h.ShapeID, n), fetch(t, s, h.PrimID, n)
		r.LocalPrimID, r.GlobalPrimID = fetch(t, s, h.LocalPrimID, n), fetch(t, s, h.GlobalPrimID, n)
	}
	if flags.Has(geom.FlagShadingN) {
		r.N = fetch(t, s, h.N, 3*n)
	}
	if flags.Has(geom.FlagUV) {
		r.UV = fetch(t, s, h.UV, 2*n)
	}
	return r
}

func reflBuffers(t testing.TB, d *launch.Device, n, b int) accel.Reflections {
	return accel.Reflections{Valid: alloc[uint8](t, d, n*b), T: alloc[float32](t, d, n*b),
		Prim: alloc[int32](t, d, n*b), Images: alloc[float32](t, d, 3*n*b)}
}

func hostRefl(t testing.TB, s *launch.Stream, r accel.Reflections, n, b int) *geom.Reflections {
	out := geom.NewReflections(n, b)
	out.Valid = boolsOf(fetch(t, s, r.Valid, n*b))
	out.T, out.PrimIDs = fetch(t, s, r.T, n*b), fetch(t, s, r.Prim, n*b)
	out.ImageSources = fetch(t, s, r.Images, 3*n*b)
	return out
}

func (r *single) intersect(b batch, flags geom.Flags) *geom.Hits {
	n := len(b.o) / 3
	out := hitsBuffers(r.t, r.s.Device(), n)
	require.NoError(r.t, r.bvh.Intersect(r.s, deviceRays(r.t, r.s, b), flags, out))
	return hostHits(r.t, r.s, out, n, flags)
}

func (r *single) reflect(b batch, bounces int) *geom.Reflections {
	n := len(b.o) / 3
	out := reflBuffers(r.t, r.s.Device(), n, bounces)
	require.NoError(r.t, r.bvh.TraceReflections(r.s, deviceRays(r.t, r.s, b), bounces, out))
	return hostRefl(r.t, r.s, out, n, bounces)
}

func (r *single) visible(b batch) []bool {
	n := len(b.o) / 3
	rays := deviceRays(r.t, r.s, batch{o: b.o, d: b.d, active: b.active})
	out := alloc[uint8](r.t, r.s.Device(), n)
	require.NoError(r.t, r.bvh.Visible(r.s, accel.Segments{Start: rays.O, End: rays.D, Active: rays.Active, N: n}, out))
	return boolsOf(fetch(r.t, r.s, out, n))
}

// sameHits requires two host records to agree bit for bit on every field.
func sameHits(t testing.TB, what string, got, want *geom.Hits) {
	t.Helper()
	require.NotNil(t, got, what)
	if !testscene.SameHits(got, want) {
		t.Fatalf("%s: hits differ (rows %d vs %d, first differing row %d)", what, got.Len(), want.Len(),
			testscene.FirstDiff(got, want))
	}
}

func sameRefl(t testing.TB, what string, got, want *geom.Reflections) {
	t.Helper()
	require.NotNil(t, got, what)
	if !testscene.SameReflections(got, want) {
		t.Fatalf("%s: reflections differ (rows %d vs %d)", what, got.Len(), want.Len())
	}
}

func sameBools(t testing.TB, what string, got, want []bool) {
	t.Helper()
	if !testscene.EqualSlices(got, want) {
		t.Fatalf("%s: visibility differs (rows %d vs %d)", what, len(got), len(want))
	}
}
