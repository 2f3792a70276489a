package accel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// gpuScenes are the geometries of the GPU tests.
func gpuScenes(t *testing.T) map[string]*geom.Tables {
	one := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	same := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}}
	for range 5000 {
		same.Faces = append(same.Faces, 0, 1, 2)
	}
	light, _, _ := workload.Light.Build()
	return map[string]*geom.Tables{
		"one":       tables(t, one),
		"two":       tables(t, one, one),
		"identical": tables(t, same),
		"grid":      tables(t, gridMesh(30, 2)),
		"cloud":     tables(t, cloudMesh(20000, 0.02, 3)),
		"mixed":     tables(t, gridMesh(9, 3), cloudMesh(3000, 0.1, 4), one),
		"light":     tables(t, light),
	}
}

// TestGPUBuildMatchesHost: the device build downloads to exactly the host
// mirror's layout, and the layout validates.
func TestGPUBuildMatchesHost(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		scenes := gpuScenes(t)
		compute, _, _ := workload.Compute.Build()
		scenes["compute"] = tables(t, compute)
		for name, tb := range scenes {
			for _, opt := range []Options{{}, {Width: 2}, {MaxLeafSize: 1}, {MaxLeafSize: 8, TraversalCost: 2},
				{Width: 4}, {Width: 4, MaxLeafSize: 1}, {Width: 8}, {Width: 8, MaxLeafSize: 1}} {
				bvh, err := BuildWith(s, tb, opt)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got, err := bvh.DownloadLayout(s)
				if err != nil {
					t.Fatal(err)
				}
				width := bvh.Width() // Width 0: the device chose with AutoWidth
				_ = bvh.Close()
				if err := Validate(got); err != nil {
					t.Fatalf("%s %+v: device layout: %v", name, opt, err)
				}
				hopt := opt
				hopt.Width = width
				want, err := BuildHost(tb, hopt)
				if err != nil {
					t.Fatal(err)
				}
				if err := got.Equal(want); err != nil {
					t.Fatalf("%s %+v: device vs host: %v", name, opt, err)
				}
			}
		}
	})
}

// testRays mixes random rays with rays through the scene's vertices and
// special rows (inactive, NaN, zero direction, short tmax).
func testRays(tb *geom.Tables, n int, seed uint64) (o, d, tmax []float32, active []bool) {
	rng := rand.New(rand.NewPCG(seed, 5))
	nv := tb.NumVertices()
	for i := range n {
		var oi, di [3]float32
		switch i % 4 {
		case 0, 1: // from a random point toward a random vertex
			v := rng.IntN(nv)
			for k := range 3 {
				oi[k] = float32(rng.NormFloat64() * 2)
				di[k] = tb.Vertices[3*v+k] - oi[k]
			}
		case 2: // toward the midpoint of a random face edge (shared edges)
			f := rng.IntN(tb.NumFaces())
			p0, p1, _ := tb.Triangle(f)
			for k := range 3 {
				oi[k] = float32(rng.NormFloat64() * 2)
				di[k] = float32(p0[k]+p1[k])*0.5 - oi[k]
			}
		default:
			for k := range 3 {
				oi[k], di[k] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
		}
		o, d = append(o, oi[:]...), append(d, di[:]...)
		tm := float32(math.MaxFloat32)
		if i%7 == 3 {
			tm = float32(rng.Float64())
		}
		tmax = append(tmax, tm)
		active = append(active, i%11 != 5)
	}
	nan := float32(math.NaN())
	o[0], d[5], d[6], d[7], d[8], tmax[9] = nan, nan, 0, 0, 0, nan
	return o, d, tmax, active
}

// TestGPUQueriesMatchReference: intersect (BVH, persistent BVH and brute
// force), reflections and visibility equal the CPU reference bit for bit.
func TestGPUQueriesMatchReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		for key, tb := range gpuScenes(t) {
			sc, err := ref.NewScene(tb)
			if err != nil {
				t.Fatal(err)
			}
			for _, width := range []int{2, 4, 8} {
				testQueries(t, s, fmt.Sprintf("%s width %d", key, width), tb, sc, width)
			}
		}
	})
}

func testQueries(t *testing.T, s *launch.Stream, name string, tb *geom.Tables, sc *ref.Scene, width int) {
	bvh, err := BuildWith(s, tb, Options{Width: width})
	if err != nil {
		t.Fatal(err)
	}
	o, d, tmax, active := testRays(tb, 4096, 7)
	rb := newRayBatch(t, s, o, d, tmax, active)
	n := rb.dev.N
	for _, flags := range []geom.Flags{geom.FlagsAll, geom.FlagsNone, geom.FlagGeometric, geom.FlagUV | geom.FlagShadingN} {
		want, err := sc.Intersect(o, d, tmax, active, flags)
		if err != nil {
			t.Fatal(err)
		}
		got := deviceHits(t, s, n, flags, func(h Hits) error { return bvh.Intersect(s, rb.dev, flags, h) })
		compareHits(t, name+" intersect "+flags.String(), got, want)
		brute := deviceHits(t, s, n, flags, func(h Hits) error { return bvh.IntersectBrute(s, rb.dev, flags, h) })
		compareHits(t, name+" brute "+flags.String(), brute, want)
		pr := rb.dev
		pr.Counter, pr.PersistentBlocks = devOut[uint32](t, s, 1), 7
		pers := deviceHits(t, s, n, flags, func(h Hits) error { return bvh.Intersect(s, pr, flags, h) })
		compareHits(t, name+" persistent "+flags.String(), pers, want)
	}
	for _, bounces := range []int{1, 4} {
		want, err := sc.TraceReflections(o, d, tmax, active, bounces)
		if err != nil {
			t.Fatal(err)
		}
		m := n * bounces
		out := Reflections{Valid: devOut[uint8](t, s, m), T: devOut[float32](t, s, m), Prim: devOut[int32](t, s, m),
			Images: devOut[float32](t, s, 3*m)}
		if err := bvh.TraceReflections(s, rb.dev, bounces, out); err != nil {
			t.Fatal(err)
		}
		valid := download(t, s, out.Valid, m)
		for i := range m {
			if (valid[i] != 0) != want.Valid[i] {
				t.Fatalf("%s reflections B=%d: valid differs at slot %d", name, bounces, i)
			}
		}
		if i := sameBits32(download(t, s, out.T, m), want.T); i >= 0 {
			t.Fatalf("%s reflections B=%d: t differs at slot %d", name, bounces, i)
		}
		if i := sameInts(download(t, s, out.Prim, m), want.PrimIDs); i >= 0 {
			t.Fatalf("%s reflections B=%d: prim differs at slot %d", name, bounces, i)
		}
		if i := sameBits32(download(t, s, out.Images, 3*m), want.ImageSources); i >= 0 {
			t.Fatalf("%s reflections B=%d: image differs at element %d", name, bounces, i)
		}
	}
	// Visibility: segments from the ray origins to points along the rays.
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.7
	}
	want, err := sc.Visible(o, end, active)
	if err != nil {
		t.Fatal(err)
	}
	vis := devOut[uint8](t, s, n)
	seg := Segments{Start: rb.dev.O, End: devBuf(t, s, end), Active: rb.dev.Active, N: n}
	if err := bvh.Visible(s, seg, vis); err != nil {
		t.Fatal(err)
	}
	for i, v := range download(t, s, vis, n) {
		if (v != 0) != want[i] {
			t.Fatalf("%s visible differs at row %d: got %d, want %v", name, i, v, want[i])
		}
	}
	_ = bvh.Close()
}

// TestGPURefit: after moving the vertices of a dynamic mesh, a refit BVH is
// valid and answers like the reference over the new vertices.
func TestGPURefit(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		for _, width := range []int{2, 4} {
			testRefit(t, s, width)
		}
	})
}

func testRefit(t *testing.T, s *launch.Stream, width int) {
	m := cloudMesh(10000, 0.03, 8)
	m.Dynamic = true
	tb := tables(t, m, gridMesh(12, 2))
	bvh, err := BuildWith(s, tb, Options{Width: width})
	if err != nil {
		t.Fatal(err)
	}
	defer bvh.Close()
	if !bvh.Refittable() {
		t.Fatal("a BVH with a dynamic mesh is not refittable")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	moved := make([]float32, len(m.Vertices))
	for i, x := range m.Vertices {
		moved[i] = x*1.3 + float32(rng.NormFloat64()*0.01) + 0.2
	}
	if err := tb.UpdateVertices(0, moved); err != nil {
		t.Fatal(err)
	}
	if err := bvh.Refit(s, tb); err != nil {
		t.Fatal(err)
	}
	lay, err := bvh.DownloadLayout(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(lay); err != nil {
		t.Fatalf("refit layout: %v", err)
	}
	sc, err := ref.NewScene(tb)
	if err != nil {
		t.Fatal(err)
	}
	o, d, tmax, active := testRays(tb, 4096, 9)
	rb := newRayBatch(t, s, o, d, tmax, active)
	want, _ := sc.Intersect(o, d, tmax, active, geom.FlagsAll)
	got := deviceHits(t, s, rb.dev.N, geom.FlagsAll, func(h Hits) error { return bvh.Intersect(s, rb.dev, geom.FlagsAll, h) })
	compareHits(t, "refit", got, want)
	// A static scene is not refittable.
	st, err := Build(s, tables(t, gridMesh(3, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.RefitGeometry(s); err != ErrNotRefittable {
		t.Fatalf("static refit: %v", err)
	}
}

// TestGPUBenchmarkScenes: the benchmark scenes' intersect matches the
// reference on a sample of their rays (full-size BVHs).
func TestGPUBenchmarkScenes(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		for _, cfg := range []workload.Config{workload.Light.Scaled(1 << 15), workload.Compute.Scaled(1 << 14)} {
			mesh, o, d := cfg.Build()
			tb := tables(t, mesh)
			sc, err := ref.NewScene(tb)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := sc.Intersect(o, d, nil, nil, geom.FlagsAll)
			rb := newRayBatch(t, s, o, d, nil, nil)
			for _, width := range []int{2, 4, 8} {
				bvh, err := BuildWith(s, tb, Options{Width: width})
				if err != nil {
					t.Fatal(err)
				}
				got := deviceHits(t, s, rb.dev.N, geom.FlagsAll, func(h Hits) error { return bvh.Intersect(s, rb.dev, geom.FlagsAll, h) })
				compareHits(t, fmt.Sprintf("%s width %d", cfg.Name, width), got, want)
				_ = bvh.Close()
			}
		}
	})
}
