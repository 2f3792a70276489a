package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// closestScene is a soup, a grid, the grid's exact copy (every point near
// it ties between the copies) and a mesh of degenerate faces (a sliver, a
// segment, a point).
func closestScene(t testing.TB) *geom.Tables {
	g := gridMesh(24, 3)
	deg := geom.Mesh{Vertices: []float32{0.2, 0.2, 0.5, 0.6, 0.2, 0.5, 0.4, 0.2000001, 0.5, 1, 1, 1, -0.3, 0.7, 0.1},
		Faces: []int32{0, 1, 2, 0, 1, 0, 3, 3, 3, 4, 0, 4}}
	return tables(t, cloudMesh(20000, 0.05, 7), g, g, deg)
}

// closestPoints is n query points: uniform in a box around the scene,
// exactly on vertices, and on vertices nudged by a few ulps, with one
// non-finite row; active drops every ninth row.
func closestPoints(r *rand.Rand, tb *geom.Tables, n int) ([]float32, []bool) {
	p := make([]float32, 3*n)
	for i := range n {
		switch i % 3 {
		case 0:
			for k := range 3 {
				p[3*i+k] = float32(r.Float64()*3.6 - 1.8)
			}
		default:
			v := r.IntN(tb.NumVertices())
			for k := range 3 {
				x := tb.Vertices[3*v+k]
				if i%3 == 2 {
					x = math.Float32frombits(math.Float32bits(x) + uint32(r.IntN(5)) - 2)
				}
				p[3*i+k] = x
			}
		}
	}
	p[3*7+1] = float32(math.Inf(1))
	act := make([]bool, n)
	for i := range act {
		act[i] = i%9 != 0
	}
	return p, act
}

// TestGPUClosestPointMatchesTheReference: on child-pair and quad layouts,
// persistent or not, with and without a mask, bounded and unbounded, the
// BVH walk and the brute-force kernel both write the CPU reference's record
// bit for bit into poisoned outputs on 65,536 rows.
func TestGPUClosestPointMatchesTheReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 12))
		tb := closestScene(t)
		rs, err := ref.NewScene(tb)
		if err != nil {
			t.Fatal(err)
		}
		const n = 65536
		points, act := closestPoints(r, tb, n)
		dp, da := devBuf(t, s, points), devBuf(t, s, boolBytes(act))
		counter := devOut[uint32](t, s, 1)
		for _, w := range []int{2, 4} {
			b, err := BuildWith(s, tb, Options{Width: w})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			for _, maxDist := range []float32{0, 0.04} {
				limit, _ := geom.CheckMaxDist(maxDist)
				for _, masked := range []bool{false, true} {
					var mask []bool
					q := ClosestPoints{P: dp, N: n, Limit: limit}
					if masked {
						mask, q.Active = act, da
					}
					want, err := rs.ClosestPoints(points, maxDist, mask)
					if err != nil {
						t.Fatal(err)
					}
					for _, mode := range []string{"walk", "persistent", "brute"} {
						out := ClosestOut{Distance: poisoned[float32](t, s, n, poisonF32),
							Point: poisoned[float32](t, s, 3*n, poisonF32), Bary: poisoned[float32](t, s, 3*n, poisonF32),
							ShapeID: poisoned[int32](t, s, n, poisonI32), LocalFaceID: poisoned[int32](t, s, n, poisonI32),
							GlobalFaceID: poisoned[int32](t, s, n, poisonI32)}
						run := q
						switch mode {
						case "persistent":
							run.Counter = counter
							err = b.ClosestPoint(s, run, out)
						case "walk":
							err = b.ClosestPoint(s, run, out)
						default:
							if n > 16384 { // the brute force is rows × faces: a prefix suffices
								run.N = 16384
							}
							err = b.ClosestPointBrute(s, run, out)
						}
						if err != nil {
							t.Fatal(err)
						}
						m := run.N
						got := &geom.ClosestPoints{Dist: download(t, s, out.Distance, m), Point: download(t, s, out.Point, 3*m),
							Bary: download(t, s, out.Bary, 3*m), ShapeID: download(t, s, out.ShapeID, m),
							LocalFaceID: download(t, s, out.LocalFaceID, m), GlobalFaceID: download(t, s, out.GlobalFaceID, m)}
						compareClosest(t, mode, w, maxDist, masked, want, got)
					}
				}
			}
		}
	})
}

// compareClosest reports the first row of got (a prefix of the rows) that
// differs from want in any bit.
func compareClosest(t *testing.T, mode string, w int, maxDist float32, masked bool, want, got *geom.ClosestPoints) {
	t.Helper()
	m := got.Len()
	checks := []struct {
		name string
		i    int
	}{
		{"Dist", strictBits(want.Dist[:m], got.Dist)}, {"Point", strictBits(want.Point[:3*m], got.Point)},
		{"Bary", strictBits(want.Bary[:3*m], got.Bary)}, {"ShapeID", sameInts(want.ShapeID[:m], got.ShapeID)},
		{"LocalFaceID", sameInts(want.LocalFaceID[:m], got.LocalFaceID)},
		{"GlobalFaceID", sameInts(want.GlobalFaceID[:m], got.GlobalFaceID)},
	}
	for _, c := range checks {
		if c.i >= 0 {
			t.Fatalf("%s width %d maxDist %v masked %v: %s differs at element %d", mode, w, maxDist, masked, c.name, c.i)
		}
	}
	valid := 0
	for i := range m {
		if got.Valid(i) {
			valid++
		}
	}
	if valid == 0 {
		t.Fatalf("%s width %d: no row found a face", mode, w)
	}
}

// strictBits is the first index where a and b differ in any bit (−0 and +0
// differ), −1 when none does.
func strictBits(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestClosestSceneIsAccepted: the GPU test's scene (with its degenerate
// faces) builds, and its reference finds faces for most rows of the batch.
func TestClosestSceneIsAccepted(t *testing.T) {
	tb := closestScene(t)
	rs, err := ref.NewScene(tb)
	if err != nil {
		t.Fatal(err)
	}
	points, act := closestPoints(rand.New(rand.NewPCG(1, 2)), tb, 3000)
	c, err := rs.ClosestPoints(points, 0, act)
	if err != nil {
		t.Fatal(err)
	}
	valid := 0
	for i := range c.Len() {
		if c.Valid(i) {
			valid++
		}
	}
	if valid < 2000 {
		t.Fatalf("%d of 3000 rows found a face", valid)
	}
	if c.Valid(7) {
		t.Fatal("the non-finite row found a face")
	}
}
