// Package testscene holds the scene and ray generators shared by the tests
// of the CPU reference, the GPU BVH and the public API: closed meshes (boxes,
// spheres with degenerate pole triangles), random triangle soups, grids, and
// ray batches that aim exactly at vertices and edges. Test-only.
package testscene

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
)

// Seed returns a fresh seed for a test's random inputs (from the clock, or
// RAYD_TEST_SEED when it is set) and logs it when the test fails, so that a
// failure can be replayed: RAYD_TEST_SEED=<seed> go test -run <test>.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RAYD_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RAYD_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed: RAYD_TEST_SEED=%d", seed)
		}
	})
	return seed
}

// Rand returns a generator seeded by Seed.
func Rand(t testing.TB) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(Seed(t), 0x9e3779b97f4a7c15))
}

// Box is a closed axis-aligned box with outward normals (12 triangles).
func Box(c, h [3]float32) geom.Mesh {
	var v []float32
	for i := range 8 {
		for k := range 3 {
			s := float32(-1)
			if i>>k&1 == 1 {
				s = 1
			}
			v = append(v, c[k]+s*h[k])
		}
	}
	// Vertex i has bit k set when it lies on the + side of axis k.
	f := []int32{
		0, 2, 3, 0, 3, 1, // z-
		4, 5, 7, 4, 7, 6, // z+
		0, 1, 5, 0, 5, 4, // y-
		2, 6, 7, 2, 7, 3, // y+
		0, 4, 6, 0, 6, 2, // x-
		1, 3, 7, 1, 7, 5, // x+
	}
	return geom.Mesh{Vertices: v, Faces: f}
}

// Sphere is a closed latitude/longitude sphere; the pole rows contain
// degenerate triangles, which must never be hit.
func Sphere(c [3]float32, r float64, nu, nv int) geom.Mesh {
	var v []float32
	for i := range nv + 1 {
		th := math.Pi * float64(i) / float64(nv)
		st := math.Sin(th)
		if i == 0 || i == nv {
			st = 0 // the pole vertices coincide exactly
		}
		for j := range nu {
			ph := 2 * math.Pi * float64(j) / float64(nu)
			v = append(v,
				c[0]+float32(r*st*math.Cos(ph)),
				c[1]+float32(r*st*math.Sin(ph)),
				c[2]+float32(r*math.Cos(th)))
		}
	}
	idx := func(i, j int) int32 { return int32(i*nu + j%nu) }
	var f []int32
	for i := range nv {
		for j := range nu {
			a, b, cc, d := idx(i, j), idx(i, j+1), idx(i+1, j), idx(i+1, j+1)
			f = append(f, a, cc, b, b, cc, d)
		}
	}
	return geom.Mesh{Vertices: v, Faces: f}
}

// Soup is n independent random triangles of size ~scale in [-1,1]³,
// one in eight of them degenerate (a repeated vertex or collinear).
func Soup(r *rand.Rand, n int, scale float64) geom.Mesh {
	v := make([]float32, 0, 9*n)
	for t := range n {
		var c [3]float64
		for k := range c {
			c[k] = r.Float64()*2 - 1
		}
		var tri [3][3]float32
		for i := range 3 {
			for k := range 3 {
				tri[i][k] = float32(c[k] + r.NormFloat64()*scale)
			}
		}
		switch t % 16 {
		case 3:
			tri[2] = tri[0]
		case 11:
			for k := range 3 {
				tri[2][k] = tri[0][k] + 2*(tri[1][k]-tri[0][k])
			}
		}
		for i := range 3 {
			v = append(v, tri[i][:]...)
		}
	}
	f := make([]int32, 3*n)
	for i := range f {
		f[i] = int32(i)
	}
	return geom.Mesh{Vertices: v, Faces: f}
}

// Grid is the benchmark grid (workload.GridMesh) lifted to height z.
func Grid(cells int, span, z float32) geom.Mesh {
	m := workload.GridMesh(cells, span)
	for i := 2; i < len(m.Vertices); i += 3 {
		m.Vertices[i] = z
	}
	return m
}

// RandomRays mixes rays from random points in random directions, rays aimed
// exactly at scene vertices and at edge midpoints, and axis-aligned rays.
func RandomRays(r *rand.Rand, tb *geom.Tables, n int) (o, d, tmax []float32) {
	o = make([]float32, 0, 3*n)
	d = make([]float32, 0, 3*n)
	tmax = make([]float32, 0, n)
	for range n {
		var oi, di [3]float32
		for k := range 3 {
			oi[k] = float32(r.Float64()*3 - 1.5)
			di[k] = float32(r.NormFloat64())
		}
		switch r.IntN(6) {
		case 0, 1: // at a vertex
			vi := r.IntN(tb.NumVertices())
			for k := range 3 {
				di[k] = tb.Vertices[3*vi+k] - oi[k]
			}
		case 2: // at an edge midpoint (exact in float64, rounded once)
			f := r.IntN(tb.NumFaces())
			a, b := int(tb.Faces[3*f]), int(tb.Faces[3*f+1+r.IntN(2)])
			for k := range 3 {
				mid := (float64(tb.Vertices[3*a+k]) + float64(tb.Vertices[3*b+k])) / 2
				di[k] = float32(mid - float64(oi[k]))
			}
		case 3: // axis aligned
			di = [3]float32{}
			di[r.IntN(3)] = float32(1 - 2*r.IntN(2))
		}
		tm := float32(math.Inf(1))
		if r.IntN(4) == 0 {
			tm = float32(r.Float64() * 2)
		}
		o = append(o, oi[:]...)
		d = append(d, di[:]...)
		tmax = append(tmax, tm)
	}
	return o, d, tmax
}

// EqualBits compares two float32 slices bit for bit.
func EqualBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func EqualSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FirstDiff returns the first row where two records differ, or -1.
func FirstDiff(a, b *geom.Hits) int {
	for i := range a.Len() {
		if math.Float32bits(a.T[i]) != math.Float32bits(b.T[i]) {
			return i
		}
		if a.PrimID != nil && a.PrimID[i] != b.PrimID[i] {
			return i
		}
	}
	return -1
}

// SameHits compares every field of two records bit for bit.
func SameHits(a, b *geom.Hits) bool {
	return a.Flags == b.Flags && EqualBits(a.T, b.T) && EqualBits(a.P, b.P) && EqualBits(a.N, b.N) &&
		EqualBits(a.GeoN, b.GeoN) && EqualBits(a.Bary, b.Bary) && EqualBits(a.UV, b.UV) &&
		EqualSlices(a.ShapeID, b.ShapeID) && EqualSlices(a.PrimID, b.PrimID) &&
		EqualSlices(a.LocalPrimID, b.LocalPrimID) && EqualSlices(a.GlobalPrimID, b.GlobalPrimID) &&
		EqualSlices(a.InstanceID, b.InstanceID)
}

func SameReflections(a, b *geom.Reflections) bool {
	return a.Bounces == b.Bounces && EqualSlices(a.Valid, b.Valid) && EqualBits(a.T, b.T) &&
		EqualSlices(a.PrimIDs, b.PrimIDs) && EqualBits(a.ImageSources, b.ImageSources)
}
