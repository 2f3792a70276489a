package accel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// edgeQueryRays are n rays from the grown scene box with unnormalized
// directions and a tmax column mixing finite, zero, negative, +Inf and NaN
// values (nil when withTMax is false: half rays).
func edgeQueryRays(r *rand.Rand, n int, withTMax bool) (o, d, tmax []float32) {
	o, _ = edgeQueryPoints(r, n, false)
	d = make([]float32, 3*n)
	for i := range d {
		d[i] = float32(r.NormFloat64() * 2)
	}
	if !withTMax {
		return o, d, nil
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
			tmax[i] = float32(r.Float64() * 2)
		}
	}
	return o, d, tmax
}

func gpuRay(t *testing.T, s *launch.Stream, b *EdgeBVH, brute bool, rb *rayBatch) *edge.RayResult {
	t.Helper()
	n := rb.dev.N
	f := func(k int) *launch.Buffer[float32] { return poisoned[float32](t, s, k, poisonF32) }
	i := func() *launch.Buffer[int32] { return poisoned[int32](t, s, n, poisonI32) }
	o := EdgeRayOut{f(n), f(n), f(3 * n), f(n), f(3 * n), i(), i(), i()}
	run := b.NearestRay
	if brute {
		run = b.BruteRay
	}
	if err := run(s, rb.dev, o); err != nil {
		t.Fatal(err)
	}
	return &edge.RayResult{Distance: download(t, s, o.Distance, n), RayT: download(t, s, o.RayT, n),
		Point: download(t, s, o.Point, 3*n), EdgeT: download(t, s, o.EdgeT, n), EdgePoint: download(t, s, o.EdgePoint, 3*n),
		ShapeID: download(t, s, o.ShapeID, n), EdgeID: download(t, s, o.EdgeID, n), GlobalEdgeID: download(t, s, o.GlobalEdgeID, n)}
}

func compareRay(t *testing.T, name string, got, want *edge.RayResult) {
	t.Helper()
	requireSame(t, name, []f32Field{{"distance", got.Distance, want.Distance}, {"ray_t", got.RayT, want.RayT},
		{"point", got.Point, want.Point}, {"edge_t", got.EdgeT, want.EdgeT}, {"edge_point", got.EdgePoint, want.EdgePoint}},
		idFields(got.ShapeID, got.EdgeID, got.GlobalEdgeID, want.ShapeID, want.EdgeID, want.GlobalEdgeID))
}

// TestGPUEdgeRayAgainstReference: the BVH and brute-force ray kernels equal
// the CPU reference bit for bit for segments, half rays, degenerate and NaN
// ranges, with and without masks.
func TestGPUEdgeRayAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 6))
		for name, es := range edgeScenes(t) {
			b := buildEdgeBVH(t, s, es)
			for _, drop := range []int{0, 4} {
				applyMask(t, r, s, es, b, drop)
				masked := drop > 0
				o, d, tmax := edgeQueryRays(r, 2000, masked)
				_, act := edgeQueryPoints(r, 2000, masked)
				want, err := es.NearestRay(o, d, tmax, act)
				if err != nil {
					t.Fatal(err)
				}
				rb := newRayBatch(t, s, o, d, tmax, act)
				compareRay(t, name+" bvh", gpuRay(t, s, b, false, rb), want)
				compareRay(t, name+" brute", gpuRay(t, s, b, true, rb), want)
			}
		}
	})
}

// TestGPUEdgeTopKAgainstReference: every slot of the top-k kernel equals the
// CPU reference for k ∈ {1, 3, 16}, masks on and off, including rows with
// fewer enabled edges than k.
func TestGPUEdgeTopKAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 7))
		for name, es := range edgeScenes(t) {
			b := buildEdgeBVH(t, s, es)
			for _, k := range []int{1, 3, 16} {
				drop := 0
				if k == 3 {
					drop = 2
				}
				applyMask(t, r, s, es, b, drop)
				p, act := edgeQueryPoints(r, 1500, k != 1)
				want, err := es.NearestK(p, k, act)
				if err != nil {
					t.Fatal(err)
				}
				got := gpuTopK(t, s, b, p, act, k)
				compareTopK(t, name, got, want)
			}
		}
	})
}

func gpuTopK(t *testing.T, s *launch.Stream, b *EdgeBVH, p []float32, act []bool, k int) *edge.TopK {
	t.Helper()
	n := len(p) / 3
	m := n * k
	q := EdgePoints{P: devBuf(t, s, p), N: n}
	if act != nil {
		q.Active = devBuf(t, s, boolBytes(act))
	}
	f := func(c int) *launch.Buffer[float32] { return poisoned[float32](t, s, c, poisonF32) }
	i := func() *launch.Buffer[int32] { return poisoned[int32](t, s, m, poisonI32) }
	o := EdgeTopKOut{poisoned[uint8](t, s, m, 0xee), poisoned[uint8](t, s, m, 0xee), f(m), f(3 * m), f(m), f(3 * m), i(), i(), i()}
	if err := b.NearestK(s, q, k, o); err != nil {
		t.Fatal(err)
	}
	valid, bnd := download(t, s, o.Valid, m), download(t, s, o.Boundary, m)
	got := &edge.TopK{K: k, Valid: make([]bool, m), Boundary: make([]bool, m),
		Distance: download(t, s, o.Distance, m), Point: download(t, s, o.Point, 3*m), EdgeT: download(t, s, o.EdgeT, m),
		EdgePoint: download(t, s, o.EdgePoint, 3*m), ShapeID: download(t, s, o.ShapeID, m),
		EdgeID: download(t, s, o.EdgeID, m), GlobalEdgeID: download(t, s, o.GlobalEdgeID, m)}
	for j := range m {
		if valid[j] > 1 || bnd[j] > 1 {
			t.Fatalf("slot %d: flags %d/%d not written as 0/1", j, valid[j], bnd[j])
		}
		got.Valid[j], got.Boundary[j] = valid[j] == 1, bnd[j] == 1
	}
	return got
}

func compareTopK(t *testing.T, name string, got, want *edge.TopK) {
	t.Helper()
	label := fmt.Sprintf("%s k=%d", name, got.K)
	requireSame(t, label, []f32Field{{"distance", got.Distance, want.Distance}, {"point", got.Point, want.Point},
		{"edge_t", got.EdgeT, want.EdgeT}, {"edge_point", got.EdgePoint, want.EdgePoint}},
		idFields(got.ShapeID, got.EdgeID, got.GlobalEdgeID, want.ShapeID, want.EdgeID, want.GlobalEdgeID))
	if i := sameInts(got.Valid, want.Valid); i >= 0 {
		t.Fatalf("%s: valid differs at %d", label, i)
	}
	if i := sameInts(got.Boundary, want.Boundary); i >= 0 {
		t.Fatalf("%s: is_boundary differs at %d", label, i)
	}
}
