package accel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// queryBackend is the query surface BVH and OptiX share: one parity test
// body runs over both.
type queryBackend interface {
	Intersect(s *launch.Stream, r Rays, flags geom.Flags, out Hits) error
	TraceReflections(s *launch.Stream, r Rays, maxBounces int, out Reflections) error
	Visible(s *launch.Stream, seg Segments, out *launch.Buffer[uint8]) error
	Close() error
}

var (
	_ queryBackend = (*BVH)(nil)
	_ queryBackend = (*OptiX)(nil)
)

// backends builds every backend over tb on s (closed at cleanup).
func backends(t testing.TB, s *launch.Stream, tb *geom.Tables) map[string]queryBackend {
	t.Helper()
	bvh, err := Build(s, tb)
	if err != nil {
		t.Fatal(err)
	}
	ox, err := BuildOptiX(s, tb)
	if err != nil {
		_ = bvh.Close()
		t.Fatalf("OptiX backend: %v", err)
	}
	t.Cleanup(func() { _, _ = bvh.Close(), ox.Close() })
	return map[string]queryBackend{"bvh": bvh, "optix": ox}
}

// randomMeshes is random scene k of a seeded sequence: a cloud of
// independent triangles, a jittered grid (shared edges and vertices) or a
// mixture, by k mod 3.
func randomMeshes(rng *rand.Rand, k int) (string, []geom.Mesh) {
	grid := gridMesh(2+rng.IntN(40), 0.5+3*rng.Float32())
	for i := range grid.Vertices {
		if i%3 == 2 {
			grid.Vertices[i] += float32(rng.NormFloat64() * 0.05)
		}
	}
	cloud := cloudMesh(100+rng.IntN(20000), 0.005+0.1*rng.Float32(), rng.Uint64())
	switch k % 3 {
	case 0:
		return fmt.Sprintf("random%d-cloud", k), []geom.Mesh{cloud}
	case 1:
		return fmt.Sprintf("random%d-grid", k), []geom.Mesh{grid}
	}
	return fmt.Sprintf("random%d-mixed", k), []geom.Mesh{cloud, grid, cloudMesh(50, 0.3, rng.Uint64())}
}

// randomScenes are count seeded random scenes (randomMeshes).
func randomScenes(t testing.TB, count int, seed uint64) map[string]*geom.Tables {
	rng := rand.New(rand.NewPCG(seed, 11))
	out := map[string]*geom.Tables{}
	for k := range count {
		name, meshes := randomMeshes(rng, k)
		out[name] = tables(t, meshes...)
	}
	return out
}

// checkParity runs intersect (every flag set), reflections (B = 1, 4) and
// visibility of one backend over n test rays and compares them with the
// reference under the tie rule.
func checkParity(t *testing.T, s *launch.Stream, name string, b queryBackend, ps *parityScene, n int, seed uint64) parityStats {
	t.Helper()
	o, d, tmax, active := testRays(ps.tb, n, seed)
	if seed%2 == 1 { // also the no-tmax, all-active form
		tmax, active = nil, nil
	}
	rb := newRayBatch(t, s, o, d, tmax, active)
	var st parityStats
	want, err := ps.sc.Intersect(o, d, tmax, active, geom.FlagsAll)
	if err != nil {
		t.Fatal(err)
	}
	all := deviceHits(t, s, n, geom.FlagsAll, func(h Hits) error { return b.Intersect(s, rb.dev, geom.FlagsAll, h) })
	hs, err := ps.checkHits(o, d, tmax, active, all, want)
	if err != nil {
		t.Fatalf("%s intersect: %v", name, err)
	}
	st.add(hs)
	tOnly := deviceHits(t, s, n, geom.FlagsNone, func(h Hits) error { return b.Intersect(s, rb.dev, geom.FlagsNone, h) })
	for i := range n {
		a, g := float64(all.T[i]), float64(tOnly.T[i])
		if !(math.IsInf(a, 1) && math.IsInf(g, 1)) && math.Abs(a-g) > tolT(a) {
			t.Fatalf("%s intersect flags None: row %d t %v, flags All %v", name, i, g, a)
		}
	}
	part := deviceHits(t, s, n, geom.FlagGeometric|geom.FlagUV, func(h Hits) error {
		return b.Intersect(s, rb.dev, geom.FlagGeometric|geom.FlagUV, h)
	})
	for _, f := range [][2][]float32{{part.T, all.T}, {part.P, all.P}, {part.Bary, all.Bary}, {part.UV, all.UV}, {part.GeoN, all.GeoN}} {
		if i := sameBits32(f[0], f[1]); i >= 0 {
			t.Fatalf("%s intersect Geometric|UV differs from All at element %d", name, i)
		}
	}
	if i := sameInts(part.PrimID, all.PrimID); i >= 0 {
		t.Fatalf("%s intersect Geometric|UV prim differs from All at row %d", name, i)
	}
	for _, bounces := range []int{1, 4} {
		wr, err := ps.sc.TraceReflections(o, d, tmax, active, bounces)
		if err != nil {
			t.Fatal(err)
		}
		m := n * bounces
		out := Reflections{Valid: devOut[uint8](t, s, m), T: devOut[float32](t, s, m), Prim: devOut[int32](t, s, m),
			Images: devOut[float32](t, s, 3*m)}
		if err := b.TraceReflections(s, rb.dev, bounces, out); err != nil {
			t.Fatal(err)
		}
		got := hostReflections{valid: download(t, s, out.Valid, m), t: download(t, s, out.T, m),
			prim: download(t, s, out.Prim, m), images: download(t, s, out.Images, 3*m)}
		rs, err := ps.checkReflections(o, d, tmax, active, bounces, got, wr)
		if err != nil {
			t.Fatalf("%s reflections B=%d: %v", name, bounces, err)
		}
		st.add(rs)
	}
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.7
	}
	wv, err := ps.sc.Visible(o, end, active)
	if err != nil {
		t.Fatal(err)
	}
	vis := devOut[uint8](t, s, n)
	if err := b.Visible(s, Segments{Start: rb.dev.O, End: devBuf(t, s, end), Active: rb.dev.Active, N: n}, vis); err != nil {
		t.Fatal(err)
	}
	vs, err := ps.checkVisible(o, end, active, download(t, s, vis, n), wv)
	if err != nil {
		t.Fatalf("%s visible: %v", name, err)
	}
	st.add(vs)
	return st
}

// TestGPUOptiXParity: both backends answer like the CPU reference under the
// tie rule on the GPU test scenes and on random scenes; the BVH, which is
// bitwise equal to the reference, needs no tie or edge allowance.
func TestGPUOptiXParity(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		scenes := gpuScenes(t)
		for k, v := range randomScenes(t, 6, uint64(s.Device().Ordinal())+1) {
			scenes[k] = v
		}
		seed := uint64(0)
		for name, tb := range scenes {
			sc, err := ref.NewScene(tb)
			if err != nil {
				t.Fatal(err)
			}
			ps := &parityScene{tb: tb, sc: sc}
			seed++
			for bname, b := range backends(t, s, tb) {
				st := checkParity(t, s, name+" "+bname, b, ps, 4096, seed)
				t.Logf("%s %s: %v", name, bname, st)
				if bname == "bvh" && (st.Ties != 0 || st.EdgeCases != 0) {
					t.Fatalf("%s: the BVH needed the tie rule (%v)", name, st)
				}
			}
		}
	})
}

// TestGPUOptiXRefit: after moving the vertices of a dynamic mesh, a refit
// OptiX structure answers like the reference over the new vertices; a static
// build is compacted and not refittable.
func TestGPUOptiXRefit(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		m := cloudMesh(10000, 0.03, 8)
		m.Dynamic = true
		tb := tables(t, m, gridMesh(12, 2))
		ox, err := BuildOptiX(s, tb)
		if err != nil {
			t.Fatal(err)
		}
		defer ox.Close()
		if !ox.Refittable() {
			t.Fatal("an OptiX structure with a dynamic mesh is not refittable")
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for step := range 3 {
			moved := make([]float32, len(m.Vertices))
			for i, x := range m.Vertices {
				moved[i] = x*(1+0.1*float32(step)) + float32(rng.NormFloat64()*0.01) + 0.1*float32(step)
			}
			if err := tb.UpdateVertices(0, moved); err != nil {
				t.Fatal(err)
			}
			if err := ox.Refit(s, tb); err != nil {
				t.Fatal(err)
			}
			sc, err := ref.NewScene(tb)
			if err != nil {
				t.Fatal(err)
			}
			st := checkParity(t, s, fmt.Sprintf("refit step %d", step), ox, &parityScene{tb: tb, sc: sc}, 4096, uint64(9+step))
			t.Logf("refit step %d: %v", step, st)
		}
		if err := ox.Refit(s, tables(t, gridMesh(3, 1))); !errors.Is(err, ErrTopology) {
			t.Fatalf("refit with another topology: %v", err)
		}
		st, err := BuildOptiX(s, tables(t, gridMesh(30, 1), cloudMesh(5000, 0.02, 2)))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("static GAS (compacted): %d bytes; dynamic GAS with update scratch: %d bytes", st.GASBytes(), ox.GASBytes())
		if st.Refittable() || !errors.Is(st.RefitGeometry(s), ErrNotRefittable) {
			t.Fatal("a static OptiX structure must not be refittable")
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Intersect(s, Rays{O: devOut[float32](t, s, 3), D: devOut[float32](t, s, 3), N: 1}, geom.FlagsNone,
			Hits{T: devOut[float32](t, s, 1)}); !errors.Is(err, ErrClosedAccel) {
			t.Fatalf("query after Close: %v", err)
		}
	})
}

// TestGPUOptiXWarmUp: warming every device concurrently builds the contexts
// and pipelines; a second warm-up finds them memoised.
func TestGPUOptiXWarmUp(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	devs := make([]*launch.Device, len(ords))
	for i, o := range ords {
		d, err := launch.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		devs[i] = d
	}
	first, err := WarmUpOptiX(context.Background(), devs...)
	if err != nil {
		t.Fatal(err)
	}
	again, err := WarmUpOptiX(context.Background(), devs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range devs {
		ctx, err := d.OptiX()
		if err != nil {
			t.Fatal(err)
		}
		rt, _ := ctx.RTCoreVersion()
		cache, _ := ctx.CacheInfo()
		t.Logf("%v: warm-up %.3f s, again %.6f s; context created in %v; RT core version %d; cache %+v",
			d, first[i], again[i], ctx.CreationTime(), rt, cache)
		if again[i] > first[i]+0.05 {
			t.Errorf("%v: memoised warm-up took %.3f s (first %.3f s)", d, again[i], first[i])
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WarmUpOptiX(cancelled, devs...); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled warm-up: %v", err)
	}
}
