package workload

import (
	"math/rand/v2"

	"github.com/rayd-go/rayd/geom"
)

// pcgStream is the second PCG word; the first is the seed of the spec.
const pcgStream = 0x9e3779b97f4a7c15

// newRand is the generator behind every random draw of this package.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, pcgStream)) }

// uniform returns a float32 in [0, 1) with 24 random bits, the resolution of
// torch.rand for float32.
func uniform(r *rand.Rand) float32 {
	return float32(r.Uint32()>>8) * 0x1p-24
}

// Linspace returns n float32 values from start to end (n ≥ 2) with torch's
// CPU formula: step = (end−start)/(n−1); index i < n/2 gives start + step·i,
// the others end − step·(n−1−i), each product rounded before the sum. n == 1
// gives [start]; n ≤ 0 gives nil.
func Linspace(start, end float32, n int) []float32 {
	switch {
	case n <= 0:
		return nil
	case n == 1:
		return []float32{start}
	}
	out := make([]float32, n)
	step := float32((end - start) / float32(n-1))
	half := n / 2
	for i := range n {
		if i < half {
			out[i] = float32(start + float32(step*float32(i)))
		} else {
			out[i] = float32(end - float32(step*float32(n-1-i)))
		}
	}
	return out
}

// GridMesh is the flat grid of the light configuration and of the tests:
// (cells+1)² vertices (x, y, 0) over axis = Linspace(−span/2, span/2, cells+1),
// row-major with y as the outer index (vertex i·(cells+1)+j is
// (axis[j], axis[i], 0)), and 2·cells² faces: first (a, b, c) for every cell,
// then (b, d, c) for every cell, cells in row-major order, where
// a = idx(i, j), b = idx(i, j+1), c = idx(i+1, j), d = idx(i+1, j+1). Every
// face normal is +z. cells < 1 is treated as 1.
func GridMesh(cells int, span float32) geom.Mesh {
	cells = max(cells, 1)
	n := cells + 1
	axis := Linspace(-span/2, span/2, n)
	v := make([]float32, 0, 3*n*n)
	for i := range n {
		for j := range n {
			v = append(v, axis[j], axis[i], 0)
		}
	}
	idx := func(i, j int) int32 { return int32(i*n + j) }
	f := make([]int32, 0, 6*cells*cells)
	for i := range cells {
		for j := range cells {
			f = append(f, idx(i, j), idx(i, j+1), idx(i+1, j))
		}
	}
	for i := range cells {
		for j := range cells {
			f = append(f, idx(i, j+1), idx(i+1, j+1), idx(i+1, j))
		}
	}
	return geom.Mesh{Vertices: v, Faces: f}
}

// CloudMesh is the random triangle cloud of the compute configuration:
// triangles independent triangles, faces (0,1,2), (3,4,5), …. From one
// generator seeded with seed it draws first all centers, (U³ − 0.5)·2 per
// triangle, then all offsets, (U·2 − 1)·edge per vertex coordinate (U are
// float32 uniforms in [0, 1)); vertex = center + offset, so edge is the
// half-width of each triangle's box. triangles < 1 is treated as 1.
func CloudMesh(triangles int, edge float32, seed uint64) geom.Mesh {
	triangles = max(triangles, 1)
	r := newRand(seed)
	centers := make([]float32, 3*triangles)
	for i := range centers {
		centers[i] = float32(float32(uniform(r)-0.5) * 2)
	}
	v := make([]float32, 9*triangles)
	for t := range triangles {
		for k := range 3 {
			for c := range 3 {
				off := float32(float32(float32(uniform(r)*2)-1) * edge)
				v[9*t+3*k+c] = float32(centers[3*t+c] + off)
			}
		}
	}
	f := make([]int32, 3*triangles)
	for i := range f {
		f[i] = int32(i)
	}
	return geom.Mesh{Vertices: v, Faces: f}
}
