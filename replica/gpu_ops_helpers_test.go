package replica_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// modeLayer is one executor configuration the per_ray operations are
// checked under.
type modeLayer struct {
	name string
	l    *shard.Layer
	reps []*replica.Replica
	off  *offloaded // the Offload hook's collector, nil without one
	late bool       // first queried after a vertex update is staged
}

// opModes builds the layers of the operation tests on the fixture's
// devices: rows split over the replicas down to one row per replica,
// 777-row chunks, 1000-row chunks streamed through Offload, and a layer
// that is first queried only once a vertex update is staged (so that its
// replicas build their edge BVH while an update is pending).
func (f *fixture) opModes(t *testing.T) []modeLayer {
	t.Helper()
	off := &offloaded{}
	var modes []modeLayer
	for _, m := range []struct {
		name string
		o    shard.Options
		late bool
	}{
		{"split", shard.Options{MinRaysPerDevice: 1}, false},
		{"chunked-777", shard.Options{MinRaysPerDevice: 1, ChunkRays: 777}, false},
		{"offload-1000", shard.Options{MinRaysPerDevice: 1, ChunkRays: 1000, Offload: off.hook}, false},
		{"late", shard.Options{MinRaysPerDevice: 1}, true},
	} {
		l, reps := f.layer(t, m.o)
		ml := modeLayer{name: fmt.Sprintf("%v %s", f.devices, m.name), l: l, reps: reps, late: m.late}
		if m.o.Offload != nil {
			ml.off = off
		}
		modes = append(modes, ml)
	}
	return modes
}

// offloaded collects the chunks an Offload hook receives.
type offloaded struct {
	mu    sync.Mutex
	parts []offPart
}

type offPart struct {
	start int
	rec   any
}

func (o *offloaded) hook(start int, rec any) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.parts = append(o.parts, offPart{start, rec})
	return nil
}

func (o *offloaded) take() []offPart {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.parts
	o.parts = nil
	return p
}

// remoteRows is the number of rows the remotes of a layer have launched.
func remoteRows(reps []*replica.Replica) int64 {
	var n int64
	for _, r := range reps[1:] {
		n += r.Stats().Rows
	}
	return n
}

// runOp runs task on m and returns the call's record. Under Offload the
// call returns no record: the chunks the hook received must cover every row
// exactly once, and the task assembles them. A batch of at least 64 rows
// must reach a remote.
func runOp[R any](t *testing.T, m modeLayer, task shard.RowTask[R], rows func(R) int) R {
	t.Helper()
	n, err := task.Rows()
	require.NoError(t, err)
	before := remoteRows(m.reps)
	res, err := shard.RunRows(context.Background(), m.l, task)
	require.NoError(t, err, "%s %s", m.name, task.Op().Key)
	if n >= 64 {
		require.Greater(t, remoteRows(m.reps), before, "%s %s: no remote ran (%s)", m.name, task.Op().Key,
			m.l.LastDispatch().Mode)
	}
	require.NoError(t, m.l.Poisoned())
	if m.off == nil {
		return res
	}
	require.Zero(t, res, "%s: an offloaded call returns no record", m.name)
	seen := make([]int, n)
	var parts []shard.Part[R]
	for _, p := range m.off.take() {
		rec, ok := p.rec.(R)
		require.True(t, ok, "%s: the hook received %T", m.name, p.rec)
		k := rows(rec)
		for i := range k {
			seen[p.start+i]++
		}
		parts = append(parts, shard.Part[R]{Start: p.start, Stop: p.start + k, Record: rec})
	}
	for i, c := range seen {
		require.Equal(t, 1, c, "%s %s: row %d was handed out %d times", m.name, task.Op().Key, i, c)
	}
	sortParts(parts)
	got, err := task.Assemble(n, parts)
	require.NoError(t, err)
	return got
}

// world is the scene state the layers must reflect after a stage: the
// meshes (with the synced vertex updates) and the edge mask, with
// single-device references built from them on the master: an accel BVH, an
// accel edge BVH and the CPU edge and triangle scenes (the last three on
// first use).
type world struct {
	t      *testing.T
	f      *fixture
	meshes []geom.Mesh
	tables *geom.Tables
	mask   []bool
	single *single
	edges  *accel.EdgeBVH
	cpu    *edge.Scene
	tris   *ref.Scene
}

func (f *fixture) newWorld(t *testing.T, meshes []geom.Mesh, mask []bool) *world {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	return &world{t: t, f: f, meshes: meshes, tables: tb, mask: mask, single: newSingle(t, f.src, meshes)}
}

// edgeScene is the CPU edge scene of the world (exact; the device kernels
// equal it bit for bit, ±0 aside).
func (w *world) edgeScene() *edge.Scene {
	if w.cpu == nil {
		w.cpu = edge.NewScene(w.tables)
		require.NoError(w.t, w.cpu.SetMask(w.mask))
	}
	return w.cpu
}

// triScene is the CPU triangle scene of the world.
func (w *world) triScene() *ref.Scene {
	if w.tris == nil {
		rs, err := ref.NewScene(w.tables)
		require.NoError(w.t, err)
		w.tris = rs
	}
	return w.tris
}

// edgeBVH is the single-device edge BVH of the world, on the master.
func (w *world) edgeBVH() *accel.EdgeBVH {
	if w.edges == nil {
		s := w.single.s
		b, err := accel.BuildEdges(s, w.tables.Vertices, accel.EdgeTablesOf(w.edgeScene().Edges))
		require.NoError(w.t, err)
		w.t.Cleanup(func() {
			require.NoError(w.t, s.Synchronize())
			require.NoError(w.t, b.Close())
		})
		require.NoError(w.t, b.SetMask(s, w.mask))
		w.edges = b
	}
	return w.edges
}

// stages drives the layers of modes through the mutations every operation
// is checked across, calling check after each: as built; after an edge
// mask change; with a vertex update of the dynamic grid staged (invisible
// until the sync); after the broadcast sync; after the mask is cleared.
// The late layer is checked from the staged stage on.
func (f *fixture) stages(t *testing.T, modes []modeLayer, check func(stage string, w *world, modes []modeLayer)) {
	t.Helper()
	ctx := context.Background()
	broadcast := func(m shard.Mutation) {
		for _, ml := range modes {
			require.NoError(t, ml.l.Broadcast(ctx, m), "%s %s", ml.name, m.Operation())
		}
	}
	early := slices.DeleteFunc(slices.Clone(modes), func(m modeLayer) bool { return m.late })
	w := f.newWorld(t, f.meshes, nil)
	check("built", w, early)

	mask := make([]bool, w.edgeScene().Edges.Len())
	for i := range mask {
		mask[i] = f.rng.IntN(3) != 0
	}
	broadcast(shard.SetEdgeMask{Mask: mask})
	w = f.newWorld(t, f.meshes, mask)
	check("masked", w, early)

	moved := slices.Clone(f.meshes[0].Vertices)
	for i := 2; i < len(moved); i += 3 {
		moved[i] += float32(0.05*float64((i/3)%7) + 0.02*f.rng.NormFloat64())
	}
	broadcast(shard.UpdateVertices{Mesh: 0, Vertices: moved})
	check("staged", w, modes)

	broadcast(shard.SyncGeometry{})
	meshes := slices.Clone(f.meshes)
	meshes[0].Vertices = moved
	w = f.newWorld(t, meshes, mask)
	check("moved", w, modes)

	broadcast(shard.SetEdgeMask{})
	w = f.newWorld(t, meshes, nil)
	check("unmasked", w, modes)
	for _, ml := range modes {
		for i, r := range ml.reps {
			require.Equal(t, ml.reps[0].Version(), r.Version(), "%s replica %d", ml.name, i)
		}
	}
}

// opSizes are the batch sizes of a stage: the empty and one-row batches
// once, as built, and an odd batch of thousands of rows every time.
func opSizes(stage string) []int {
	if stage == "built" {
		return []int{0, 1, 5003}
	}
	return []int{5003}
}

// poison is the 32-bit pattern written into every reference output (a NaN
// as float32, an impossible id as int32); byte and float64 outputs get
// 0xa5 in every byte.
const poison = 0x7fc0dead

// poisoned allocates n elements on s's device filled with the poison.
func poisoned[T launch.Elem](t testing.TB, s *launch.Stream, n int) *launch.Buffer[T] {
	t.Helper()
	b := alloc[T](t, s.Device(), n)
	if n == 0 {
		return b
	}
	var err error
	switch any(b).(type) {
	case *launch.Buffer[float32], *launch.Buffer[int32]:
		err = b.Memset32(s, poison)
	default:
		err = b.Memset8(s, 0xa5)
	}
	require.NoError(t, err)
	return b
}

// sameF32 requires bitwise equal float32 values, or, with zeroes, equal up
// to the sign of zero (the device kernels against the CPU reference).
func sameF32(t testing.TB, what string, got, want []float32, zeroes bool) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(zeroes && got[i] == 0 && want[i] == 0) {
			t.Fatalf("%s: element %d is %v (%#x), want %v (%#x)", what, i, got[i], math.Float32bits(got[i]),
				want[i], math.Float32bits(want[i]))
		}
	}
}

// sameF64 requires bitwise equal float64 values.
func sameF64(t testing.TB, what string, got, want []float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: element %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// near64 requires |got − want| ≤ tol·(1 + |want|) element by element.
func near64(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Fatalf("%s: element %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// randomPoints are n query points in the scene's box grown by a margin,
// with a non-finite row every 97 rows and every 5th row inactive.
func randomPoints(f *fixture, n int) ([]float32, []bool) {
	p := make([]float32, 3*n)
	for i := range p {
		p[i] = float32(f.rng.Float64()*3.4 - 1.7)
	}
	for i := 0; i < n; i += 97 {
		p[3*i+1] = float32(math.NaN())
	}
	act := make([]bool, n)
	for i := range act {
		act[i] = i%5 != 0
	}
	return p, act
}

// randomEdgeRays are n rays from random points: half rays (+Inf), empty,
// negative and non-finite tmax, and segments of random length.
func randomEdgeRays(f *fixture, n int) (o, d, tmax []float32) {
	o, _ = randomPoints(f, n)
	d = make([]float32, 3*n)
	for i := range d {
		d[i] = float32(f.rng.NormFloat64())
	}
	tmax = make([]float32, n)
	for i := range tmax {
		switch i % 7 {
		case 0:
			tmax[i] = float32(math.Inf(1))
		case 1:
			tmax[i] = 0
		case 2:
			tmax[i] = -1
		case 3:
			tmax[i] = float32(math.NaN())
		default:
			tmax[i] = float32(f.rng.Float64() * 2)
		}
	}
	return o, d, tmax
}

// f64s are n normal float64 values; f32s n uniform float32 values in
// [-1, 1).
func f64s(f *fixture, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f.rng.NormFloat64()
	}
	return v
}

func f32s(f *fixture, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = f.rng.Float32()*2 - 1
	}
	return v
}
