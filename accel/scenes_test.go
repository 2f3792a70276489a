package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// gridMesh is the z = 0 plane grid of the light benchmark scene: cells×cells
// quads of two triangles over [−span/2, span/2]².
func gridMesh(cells int, span float32) geom.Mesh {
	n := cells + 1
	var m geom.Mesh
	for j := range n {
		for i := range n {
			x := -0.5*span + span*float32(i)/float32(cells)
			y := -0.5*span + span*float32(j)/float32(cells)
			m.Vertices = append(m.Vertices, x, y, 0)
		}
	}
	var second []int32
	for j := range cells {
		for i := range cells {
			a := int32(j*n + i)
			b, c, d := a+1, a+int32(n), a+int32(n)+1
			m.Faces = append(m.Faces, a, b, c)
			second = append(second, b, d, c)
		}
	}
	m.Faces = append(m.Faces, second...)
	return m
}

// cloudMesh is count small independent triangles (vertex offsets ±edge)
// with centres uniform in [−1, 1]³, the compute benchmark scene's shape.
func cloudMesh(count int, edge float32, seed uint64) geom.Mesh {
	rng := rand.New(rand.NewPCG(seed, 1))
	var m geom.Mesh
	for f := range count {
		c := [3]float32{rng.Float32()*2 - 1, rng.Float32()*2 - 1, rng.Float32()*2 - 1}
		for range 3 {
			for k := range 3 {
				m.Vertices = append(m.Vertices, c[k]+(rng.Float32()*2-1)*edge)
			}
		}
		m.Faces = append(m.Faces, int32(3*f), int32(3*f+1), int32(3*f+2))
	}
	return m
}

func tables(t testing.TB, meshes ...geom.Mesh) *geom.Tables {
	t.Helper()
	tb, err := geom.BuildTables(meshes)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// ray is one test ray.
type ray struct{ o, d [3]float32 }

// planeRays are the light scene's rays: origins on z = −1, directions
// upward with scattered tilts.
func planeRays(count int, seed uint64) []ray {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make([]ray, count)
	for i := range out {
		o := [3]float32{rng.Float32()*1.8 - 0.9, rng.Float32()*1.8 - 0.9, -1}
		d := [3]float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(math.Abs(rng.NormFloat64())) + 0.25}
		out[i] = ray{o, normalize(d)}
	}
	return out
}

// volumeRays are the compute scene's rays: origins uniform in [−1, 1]³,
// directions uniform on the sphere.
func volumeRays(count int, seed uint64) []ray {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]ray, count)
	for i := range out {
		o := [3]float32{rng.Float32()*2 - 1, rng.Float32()*2 - 1, rng.Float32()*2 - 1}
		d := [3]float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
		out[i] = ray{o, normalize(d)}
	}
	return out
}

func normalize(d [3]float32) [3]float32 {
	l := float32(math.Sqrt(float64(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])))
	return [3]float32{d[0] / l, d[1] / l, d[2] / l}
}
