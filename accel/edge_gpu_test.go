package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// poison values written into every output before a GPU query.
const (
	poisonF32 uint32 = 0x7fc0dead
	poisonI32 uint32 = 0x5eadbeef
)

// edgeScenes are the scenes of the GPU edge tests: a triangle soup, a grid
// whose edges tie exactly, a two-mesh scene with edges disabled on one
// mesh, and a scene of one edge (built by hand: no mesh has one edge).
func edgeScenes(t *testing.T) map[string]*edge.Scene {
	grid := gridMesh(24, 8)
	two := []geom.Mesh{cloudMesh(300, 0.08, 7), gridMesh(6, 2)}
	two[1].EdgesDisabled = true
	one := &edge.Scene{Tables: tables(t, cloudMesh(1, 0.2, 3)),
		Edges: &edge.Edges{V0: []int32{0}, V1: []int32{2}, Face0: []int32{0}, Face1: []int32{-1},
			Opposite: []int32{1}, ShapeID: []int32{0}, LocalID: []int32{0}}}
	return map[string]*edge.Scene{
		"soup":  edge.NewScene(tables(t, cloudMesh(3000, 0.05, 11))),
		"grid":  edge.NewScene(tables(t, grid)),
		"two":   edge.NewScene(tables(t, two...)),
		"one":   one,
		"empty": edge.NewScene(tables(t, func() geom.Mesh { m := gridMesh(2, 1); m.EdgesDisabled = true; return m }())),
	}
}

// edgeQueryPoints are n points in the scene's box grown by 50%, with a
// non-finite row every 97 rows and (when active is wanted) every 5th row
// inactive.
func edgeQueryPoints(r *rand.Rand, n int, withActive bool) ([]float32, []bool) {
	p := make([]float32, 3*n)
	for i := range p {
		p[i] = float32(r.Float64()*3 - 1.5)
	}
	for i := 0; i < n; i += 97 {
		p[3*i+1] = float32(math.NaN())
	}
	var act []bool
	if withActive {
		act = make([]bool, n)
		for i := range act {
			act[i] = i%5 != 0
		}
	}
	return p, act
}

func poisoned[T launch.Elem](t *testing.T, s *launch.Stream, n int, bits uint32) *launch.Buffer[T] {
	t.Helper()
	b := devOut[T](t, s, n)
	var err error
	switch any(b).(type) {
	case *launch.Buffer[uint8], *launch.Buffer[float64]:
		err = b.Memset8(s, uint8(bits))
	default:
		err = b.Memset32(s, bits)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applyMask installs the same random edge mask (each edge kept with
// probability 1 − 1/dropOneIn; dropOneIn 0: no mask) on the reference scene
// and the device BVH.
func applyMask(t *testing.T, r *rand.Rand, s *launch.Stream, es *edge.Scene, b *EdgeBVH, dropOneIn int) {
	t.Helper()
	var mask []bool
	if dropOneIn > 0 && es.Edges.Len() > 0 {
		mask = make([]bool, es.Edges.Len())
		for i := range mask {
			mask[i] = r.IntN(dropOneIn) != 0
		}
	}
	if err := es.SetMask(mask); err != nil {
		t.Fatal(err)
	}
	if err := b.SetMask(s, mask); err != nil {
		t.Fatal(err)
	}
}

// gpuPoint runs a point query (BVH or brute) and downloads the record.
func gpuPoint(t *testing.T, s *launch.Stream, b *EdgeBVH, brute bool, p []float32, act []bool) *edge.PointResult {
	t.Helper()
	n := len(p) / 3
	q := EdgePoints{P: devBuf(t, s, p), N: n}
	if act != nil {
		q.Active = devBuf(t, s, boolBytes(act))
	}
	o := EdgePointOut{poisoned[float32](t, s, n, poisonF32), poisoned[float32](t, s, 3*n, poisonF32),
		poisoned[float32](t, s, n, poisonF32), poisoned[int32](t, s, n, poisonI32), poisoned[int32](t, s, n, poisonI32),
		poisoned[int32](t, s, n, poisonI32)}
	run := b.NearestPoint
	if brute {
		run = b.BrutePoint
	}
	if err := run(s, q, o); err != nil {
		t.Fatal(err)
	}
	return &edge.PointResult{Distance: download(t, s, o.Distance, n), EdgePoint: download(t, s, o.EdgePoint, 3*n),
		EdgeT: download(t, s, o.EdgeT, n), ShapeID: download(t, s, o.ShapeID, n), EdgeID: download(t, s, o.EdgeID, n),
		GlobalEdgeID: download(t, s, o.GlobalEdgeID, n)}
}

// f32Field and i32Field name one output field of a GPU record and of its
// reference.
type (
	f32Field struct {
		n    string
		g, w []float32
	}
	i32Field struct {
		n    string
		g, w []int32
	}
)

// requireSame fails at the first field that differs (float bits, ±0 aside).
func requireSame(t *testing.T, name string, fs []f32Field, is []i32Field) {
	t.Helper()
	for _, f := range fs {
		if i := sameBits32(f.g, f.w); i >= 0 {
			t.Fatalf("%s: %s differs at %d: got %v want %v", name, f.n, i, f.g[i], f.w[i])
		}
	}
	for _, f := range is {
		if i := sameInts(f.g, f.w); i >= 0 {
			t.Fatalf("%s: %s differs at %d: got %v want %v", name, f.n, i, f.g[i], f.w[i])
		}
	}
}

func idFields(gs, gl, gg, ws, wl, wg []int32) []i32Field {
	return []i32Field{{"shape_id", gs, ws}, {"edge_id", gl, wl}, {"global_edge_id", gg, wg}}
}

func comparePoint(t *testing.T, name string, got, want *edge.PointResult) {
	t.Helper()
	requireSame(t, name, []f32Field{{"distance", got.Distance, want.Distance}, {"edge_point", got.EdgePoint, want.EdgePoint},
		{"edge_t", got.EdgeT, want.EdgeT}},
		idFields(got.ShapeID, got.EdgeID, got.GlobalEdgeID, want.ShapeID, want.EdgeID, want.GlobalEdgeID))
}

func buildEdgeBVH(t *testing.T, s *launch.Stream, es *edge.Scene) *EdgeBVH {
	t.Helper()
	b, err := BuildEdges(s, es.Tables.Vertices, EdgeTablesOf(es.Edges))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestGPUEdgePointAgainstReference: the BVH and brute-force point kernels
// equal the CPU reference bit for bit on every scene, with and without an
// edge mask and an active mask, after a refit and on a fresh random batch.
func TestGPUEdgePointAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 5))
		for name, es := range edgeScenes(t) {
			b := buildEdgeBVH(t, s, es)
			for _, drop := range []int{0, 3} {
				applyMask(t, r, s, es, b, drop)
				masked := drop > 0
				p, act := edgeQueryPoints(r, 3000, masked)
				want, err := es.NearestPoint(p, act)
				if err != nil {
					t.Fatal(err)
				}
				comparePoint(t, name+" bvh", gpuPoint(t, s, b, false, p, act), want)
				comparePoint(t, name+" brute", gpuPoint(t, s, b, true, p, act), want)
			}
		}
	})
}
