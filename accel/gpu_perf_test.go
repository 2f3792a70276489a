package accel

import (
	"os"
	"sort"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

// timeOn returns the median device time of fn over reps runs (after one
// warm-up), measured with events on s.
func timeOn(t *testing.T, s *launch.Stream, reps int, fn func() error) time.Duration {
	t.Helper()
	d := s.Device()
	start, err := d.NewEvent(true)
	if err != nil {
		t.Fatal(err)
	}
	end, err := d.NewEvent(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(); err != nil {
		t.Fatal(err)
	}
	var ms []float64
	for range reps {
		if err := start.Record(s); err != nil {
			t.Fatal(err)
		}
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		if err := end.Record(s); err != nil {
			t.Fatal(err)
		}
		if err := end.Synchronize(); err != nil {
			t.Fatal(err)
		}
		e, err := launch.Elapsed(start, end)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, float64(e))
	}
	sort.Float64s(ms)
	return time.Duration(ms[len(ms)/2] * float64(time.Millisecond))
}

// TestGPUPerf prints device times of the build and the three queries on the
// benchmark configurations (set RAYD_ACCEL_PERF=1). Targets on one H200:
// light intersect (76 B/row) ≤ 0.6 ms, compute intersect ≤ 15 ms, builds
// ≤ 0.76 ms (light) and 5.87 ms (compute).
func TestGPUPerf(t *testing.T) {
	if os.Getenv("RAYD_ACCEL_PERF") == "" {
		t.Skip("set RAYD_ACCEL_PERF=1 to time the benchmark configurations")
	}
	s := gpuStream(t)
	for _, cfg := range []workload.Config{workload.Light, workload.Compute} {
		for _, width := range []int{2, 4} {
			perfConfig(t, s, cfg, Options{Width: width})
		}
	}
}

func perfConfig(t *testing.T, s *launch.Stream, cfg workload.Config, opt Options) {
	mesh, o, d := cfg.Build()
	tb := tables(t, mesh)
	g := Geometry{Vertices: devBuf(t, s, tb.Vertices), Faces: devBuf(t, s, tb.Faces),
		FaceShape: devBuf(t, s, tb.FaceShape), FaceLocal: devBuf(t, s, tb.FaceLocal)}
	var bvh *BVH
	build := timeOn(t, s, 5, func() error {
		if bvh != nil {
			_ = bvh.Close()
		}
		var err error
		bvh, err = BuildGeometry(s, g, opt, false)
		return err
	})
	n := len(o) / 3
	rays := Rays{O: devBuf(t, s, o), D: devBuf(t, s, d), N: n}
	hits := Hits{T: devOut[float32](t, s, n), P: devOut[float32](t, s, 3*n), N: devOut[float32](t, s, 3*n),
		GeoN: devOut[float32](t, s, 3*n), UV: devOut[float32](t, s, 2*n), Bary: devOut[float32](t, s, 3*n),
		ShapeID: devOut[int32](t, s, n), PrimID: devOut[int32](t, s, n), LocalPrimID: devOut[int32](t, s, n),
		GlobalPrimID: devOut[int32](t, s, n)}
	full := timeOn(t, s, 7, func() error { return bvh.Intersect(s, rays, geom.FlagsAll, hits) })
	tOnly := timeOn(t, s, 7, func() error { return bvh.Intersect(s, rays, geom.FlagsNone, hits) })
	pr := rays
	pr.Counter = devOut[uint32](t, s, 1)
	pers := timeOn(t, s, 7, func() error { return bvh.Intersect(s, pr, geom.FlagsAll, hits) })
	b := cfg.MaxBounces
	refl := Reflections{Valid: devOut[uint8](t, s, n*b), T: devOut[float32](t, s, n*b), Prim: devOut[int32](t, s, n*b)}
	rt := timeOn(t, s, 5, func() error { return bvh.TraceReflections(s, rays, b, refl) })
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.5
	}
	vis := devOut[uint8](t, s, n)
	seg := Segments{Start: rays.O, End: devBuf(t, s, end), N: n}
	vt := timeOn(t, s, 7, func() error { return bvh.Visible(s, seg, vis) })
	t.Logf("%-8s width %d, %d tris, %d rays: build %v (%d nodes, height %d) | intersect all %v, t-only %v, persistent %v | reflections B=%d %v | visible %v",
		cfg.Name, bvh.Width(), tb.NumFaces(), n, build, bvh.NumNodes(), bvh.Height(), full, tOnly, pers, b, rt, vt)
	_ = bvh.Close()
}
