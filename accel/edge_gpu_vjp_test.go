package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// TestGPUEdgeRefitKeepsMaskAndAgrees: after the vertices move, Refit gives
// the reference results of the moved scene, and the mask set before the
// refit still applies.
func TestGPUEdgeRefitKeepsMaskAndAgrees(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 8))
		es := edge.NewScene(tables(t, cloudMesh(2000, 0.05, 21)))
		b := buildEdgeBVH(t, s, es)
		mask := make([]bool, es.Edges.Len())
		for i := range mask {
			mask[i] = i%3 != 0
		}
		if err := es.SetMask(mask); err != nil {
			t.Fatal(err)
		}
		if err := b.SetMask(s, mask); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			v := es.Tables.Vertices
			for i := range v {
				v[i] += float32(r.NormFloat64() * 0.2)
			}
			if err := b.Refit(s, v); err != nil {
				t.Fatal(err)
			}
			p, _ := edgeQueryPoints(r, 2000, false)
			want, err := es.NearestPoint(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			comparePoint(t, "refit point", gpuPoint(t, s, b, false, p, nil), want)
			o, d, tmax := edgeQueryRays(r, 1000, true)
			wantR, err := es.NearestRay(o, d, tmax, nil)
			if err != nil {
				t.Fatal(err)
			}
			compareRay(t, "refit ray", gpuRay(t, s, b, false, newRayBatch(t, s, o, d, tmax, nil)), wantR)
		}
		if err := b.Refit(s, es.Tables.Vertices[:3]); err == nil {
			t.Fatal("Refit with another vertex count succeeded")
		}
	})
}

func randGrad(r *rand.Rand, n int) []float64 {
	g := make([]float64, n)
	for i := range g {
		g[i] = r.NormFloat64()
	}
	return g
}

// gradsMatch compares gradients: per-row values are computed by the same
// operations as the host (equal), vertex sums differ only by the order of
// the device's atomic additions.
func gradsMatch(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", name, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) {
			t.Fatalf("%s[%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}

// TestGPUEdgeVJPAgainstReference: the point and ray backward kernels equal
// the host VJPs (which are checked against finite differences in package
// edge) on a soup with random cotangents, misses included.
func TestGPUEdgeVJPAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 9))
		es := edge.NewScene(tables(t, cloudMesh(800, 0.08, 31)))
		b := buildEdgeBVH(t, s, es)
		nv := es.Tables.NumVertices()
		n := 1500

		p, _ := edgeQueryPoints(r, n, false)
		res, err := es.NearestPoint(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := edge.PointCotangent{Distance: randGrad(r, n), EdgePoint: randGrad(r, 3*n), EdgeT: randGrad(r, n)}
		wantP, wantV, err := es.NearestPointVJP(p, res, g)
		if err != nil {
			t.Fatal(err)
		}
		dp, dv := poisoned[float64](t, s, 3*n, poisonI32), poisoned[float64](t, s, 3*nv, poisonI32)
		err = b.PointVJP(s, devBuf(t, s, p), devBuf(t, s, res.GlobalEdgeID), n,
			EdgePointGrad{devBuf(t, s, g.Distance), devBuf(t, s, g.EdgePoint), devBuf(t, s, g.EdgeT)}, dp, dv)
		if err != nil {
			t.Fatal(err)
		}
		gradsMatch(t, "point dp", download(t, s, dp, 3*n), wantP, 0)
		gradsMatch(t, "point dv", download(t, s, dv, 3*nv), wantV, 1e-12)

		o, d, tmax := edgeQueryRays(r, n, true)
		rr, err := es.NearestRay(o, d, tmax, nil)
		if err != nil {
			t.Fatal(err)
		}
		rg := edge.RayCotangent{Distance: randGrad(r, n), RayT: randGrad(r, n), Point: randGrad(r, 3*n),
			EdgeT: randGrad(r, n), EdgePoint: randGrad(r, 3*n)}
		wantO, wantD, wantRV, err := es.NearestRayVJP(o, d, tmax, rr, rg)
		if err != nil {
			t.Fatal(err)
		}
		do, dd := poisoned[float64](t, s, 3*n, poisonI32), poisoned[float64](t, s, 3*n, poisonI32)
		dv2 := poisoned[float64](t, s, 3*nv, poisonI32)
		rb := newRayBatch(t, s, o, d, tmax, nil)
		err = b.RayVJP(s, rb.dev, devBuf(t, s, rr.GlobalEdgeID), EdgeRayGrad{devBuf(t, s, rg.Distance),
			devBuf(t, s, rg.RayT), devBuf(t, s, rg.Point), devBuf(t, s, rg.EdgeT), devBuf(t, s, rg.EdgePoint)}, do, dd, dv2)
		if err != nil {
			t.Fatal(err)
		}
		gradsMatch(t, "ray do", download(t, s, do, 3*n), wantO, 0)
		gradsMatch(t, "ray dd", download(t, s, dd, 3*n), wantD, 0)
		gradsMatch(t, "ray dv", download(t, s, dv2, 3*nv), wantRV, 1e-12)
	})
}
