package accel

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUWindingSumsBoundTheReference: the winding kernel, written into
// poisoned outputs, gives every active row of 32,768 points (random
// points, the scene's own vertices and points next to them, a NaN row and
// inactive rows) a finite bound within which the reference's float64 sum
// lies; inactive and non-finite rows hold NaN and bound 0; every sign the
// bound settles (geom.WindingSign) is the reference's decision.
func TestGPUWindingSumsBoundTheReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 12))
		tb := tables(t, cloudMesh(3000, 0.08, 44), gridMesh(24, 3), testscene.Sphere([3]float32{.2, 0, 0}, .7, 24, 12),
			testscene.Box([3]float32{-.3, .2, .1}, [3]float32{.4, .3, .5}))
		rs, err := ref.NewScene(tb, ref.BruteForce())
		if err != nil {
			t.Fatal(err)
		}
		const n = 1 << 15
		pts := make([]float32, 3*n)
		for i := range pts {
			pts[i] = float32(r.Float64()*3 - 1.5)
		}
		nv := tb.NumVertices()
		for i := 0; i < n/8; i++ { // vertices and points 1e-6 off them
			j := r.IntN(nv)
			v := tb.Vertices[3*j : 3*j+3]
			off := float32(0)
			if i%2 == 1 {
				off = 1e-6
			}
			copy(pts[3*i:], []float32{v[0] + off, v[1], v[2] - off})
		}
		pts[3*(n-1)] = float32(math.NaN())
		act := make([]bool, n)
		for i := range act {
			act[i] = i%13 != 5
		}
		want, err := rs.WindingSumsContext(context.Background(), pts, act)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Build(s, tb)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		out := WindingOut{Sum: poisoned[float64](t, s, n, poisonF32), Bound: poisoned[float64](t, s, n, poisonF32)}
		q := WindingPoints{P: devBuf(t, s, pts), Active: devBuf(t, s, boolBytes(act)), N: n}
		if err := b.WindingSums(s, q, out); err != nil {
			t.Fatal(err)
		}
		sum, bound := download(t, s, out.Sum, n), download(t, s, out.Bound, n)
		same, open := 0, 0
		for i := range n {
			if math.IsNaN(want.Sum[i]) {
				if !math.IsNaN(sum[i]) || bound[i] != 0 {
					t.Fatalf("row %d (inactive or non-finite): sum %v bound %v", i, sum[i], bound[i])
				}
				continue
			}
			if !(bound[i] > 0) || math.IsInf(bound[i], 0) || math.Abs(sum[i]-want.Sum[i]) > bound[i] {
				t.Fatalf("row %d: device %v ± %v, reference %v", i, sum[i], bound[i], want.Sum[i])
			}
			if sum[i] == want.Sum[i] {
				same++
			}
			sg, ok := geom.WindingSign(sum[i], bound[i])
			if !ok {
				open++
				continue
			}
			if ref, _ := geom.WindingSign(want.Sum[i], 0); sg != ref {
				t.Fatalf("row %d: sign %d, reference %d (sum %v ± %v, reference %v)", i, sg, ref, sum[i], bound[i], want.Sum[i])
			}
		}
		t.Logf("%d rows: %d sums bitwise the reference's, %d left to the host", n, same, open)
	})
}
