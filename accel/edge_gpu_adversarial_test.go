package accel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// placedMesh is m with every vertex v moved to c + s·v (float32).
func placedMesh(m geom.Mesh, c, s float64) geom.Mesh {
	out := geom.Mesh{Vertices: make([]float32, len(m.Vertices)), Faces: m.Faces}
	for i, v := range m.Vertices {
		out.Vertices[i] = float32(c + s*float64(v))
	}
	return out
}

// adversarialRays are n rays for a scene of centre c and size s that probe
// the float32 pruning test of the BVH ray kernel: origins in the grown box,
// on grid lines and on the z = 0 plane; directions along the axes and the
// grid lines (flat axes, rays lying on edges: exact ties), with tiny,
// subnormal, zero or huge components; ranges +Inf, 0, tiny, huge, the
// float32 maximum or about the scene.
func adversarialRays(r *rand.Rand, n int, c, s float64) (o, d, tmax []float32) {
	o, d, tmax = make([]float32, 3*n), make([]float32, 3*n), make([]float32, n)
	at := func(x float64) float32 { return float32(c + x*s) }
	for i := range n {
		for k := range 3 {
			o[3*i+k] = at(r.Float64()*3 - 1.5)
			d[3*i+k] = float32(r.NormFloat64())
		}
		switch r.IntN(4) {
		case 0: // on a grid line of gridMesh(8, 2), in its plane
			o[3*i+r.IntN(2)] = at(float64(r.IntN(9)-4) / 4)
			o[3*i+2] = at(0)
		case 1:
			o[3*i+2] = at(0)
		}
		switch r.IntN(8) {
		case 0: // along an axis
			k := r.IntN(3)
			d[3*i], d[3*i+1], d[3*i+2] = 0, 0, 0
			d[3*i+k] = float32(r.NormFloat64())
		case 1: // in the plane z = 0
			d[3*i+2] = 0
		case 2:
			d[3*i+r.IntN(3)] *= 1e-30
		case 3:
			d[3*i+r.IntN(3)] = math.SmallestNonzeroFloat32 * float32(1+r.IntN(100))
		case 4:
			d[3*i], d[3*i+1], d[3*i+2] = 0, 0, 0
		case 5:
			d[3*i+r.IntN(3)] *= 1e30
		}
		switch r.IntN(7) {
		case 0, 1:
			tmax[i] = float32(math.Inf(1))
		case 2:
			tmax[i] = 0
		case 3:
			tmax[i] = float32(1e-30 * r.Float64())
		case 4:
			tmax[i] = math.MaxFloat32
		case 5:
			tmax[i] = float32(1e38 * r.Float64())
		default:
			tmax[i] = float32(3 * s * r.Float64())
		}
	}
	return o, d, tmax
}

// TestGPUEdgeRayAdversarial: on a tie-heavy grid and a triangle soup at unit,
// tiny, huge and offset scales and beyond the float32 test's range (2^80),
// the BVH ray kernel equals the brute-force kernel and the CPU reference bit
// for bit on rays built to stress its pruning test.
func TestGPUEdgeRayAdversarial(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 8))
		for _, sc := range []struct{ c, s float64 }{{0, 1}, {0, 1e-25}, {0, 1e22}, {1e4, 1e-2}, {0, 1e30}} {
			for name, m := range map[string]geom.Mesh{"grid": gridMesh(8, 2), "soup": cloudMesh(2000, 0.05, 21)} {
				label := fmt.Sprintf("%s c=%g s=%g", name, sc.c, sc.s)
				es := edge.NewScene(tables(t, placedMesh(m, sc.c, sc.s)))
				b := buildEdgeBVH(t, s, es)
				o, d, tmax := adversarialRays(r, 4000, sc.c, sc.s)
				rb := newRayBatch(t, s, o, d, tmax, nil)
				got := gpuRay(t, s, b, false, rb)
				compareRay(t, label+" bvh vs brute", got, gpuRay(t, s, b, true, rb))
				want, err := es.NearestRay(o, d, tmax, nil)
				if err != nil {
					t.Fatal(err)
				}
				compareRay(t, label+" bvh vs reference", got, want)
			}
		}
	})
}
