package ref

import (
	"github.com/rayd-go/rayd/internal/testscene"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// checkAgainstBruteForce runs the three batch operations on both scenes and
// requires bit-identical records.
func checkAgainstBruteForce(t *testing.T, r *rand.Rand, name string, meshes ...geom.Mesh) {
	t.Helper()
	fast, slow := scenes(t, meshes...)
	o, d, tmax := randomRays(r, fast.Tables(), 3000)
	active := make([]bool, len(tmax))
	for i := range active {
		active[i] = r.IntN(10) != 0
	}
	for _, tm := range [][]float32{nil, tmax} {
		a, err := fast.Intersect(o, d, tm, active, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		b, err := slow.Intersect(o, d, tm, active, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		hits := 0
		for i := range a.Len() {
			if a.Valid(i) {
				hits++
			}
		}
		if hits < a.Len()/20 {
			t.Fatalf("%s: only %d of %d rays hit; the comparison is too weak", name, hits, a.Len())
		}
		if !sameHits(a, b) {
			i := firstDiff(a, b)
			t.Fatalf("%s: intersect row %d: BVH t=%g prim=%d, brute t=%g prim=%d (o=%v d=%v)", name, i,
				a.T[i], a.PrimID[i], b.T[i], b.PrimID[i], o[3*i:3*i+3], d[3*i:3*i+3])
		}
		ra, err := fast.TraceReflections(o, d, tm, active, 3)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := slow.TraceReflections(o, d, tm, active, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !sameReflections(ra, rb) {
			t.Fatalf("%s: reflections differ between BVH and brute force", name)
		}
	}
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]
	}
	va, err := fast.Visible(o, end, active)
	if err != nil {
		t.Fatal(err)
	}
	vb, err := slow.Visible(o, end, active)
	if err != nil {
		t.Fatal(err)
	}
	if !testscene.EqualSlices(va, vb) {
		t.Fatalf("%s: visibility differs between BVH and brute force", name)
	}
}

func TestBVHMatchesBruteForce(t *testing.T) {
	r := newRand(t)
	cases := []struct {
		name   string
		meshes []geom.Mesh
	}{
		{"boxes", []geom.Mesh{
			boxMesh([3]float32{0, 0, 0}, [3]float32{1, 1, 1}),
			boxMesh([3]float32{.2, -.3, .1}, [3]float32{.3, .2, .4}),
			boxMesh([3]float32{-.5, .5, -.5}, [3]float32{.1, .6, .2}),
		}},
		{"spheres", []geom.Mesh{
			sphereMesh([3]float32{0, 0, 0}, 1, 24, 12),
			sphereMesh([3]float32{.3, .2, -.1}, .4, 17, 9),
		}},
		{"grids", []geom.Mesh{gridMesh(16, 2, 0), gridMesh(7, 1.5, .25), gridMesh(5, 3, -.5)}},
		{"soup", []geom.Mesh{soupMesh(r, 1500, .1)}},
		{"small soup", []geom.Mesh{soupMesh(r, 3, .5)}},
		{"single triangle", []geom.Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}}},
		{"duplicates", []geom.Mesh{gridMesh(4, 2, 0), gridMesh(4, 2, 0), boxMesh([3]float32{}, [3]float32{.5, .5, .5})}},
		{"mixed", []geom.Mesh{
			boxMesh([3]float32{0, 0, 0}, [3]float32{1.2, 1.2, 1.2}),
			sphereMesh([3]float32{.1, .1, .1}, .5, 12, 6),
			gridMesh(10, 1.8, .3),
			soupMesh(r, 300, .05),
		}},
	}
	for _, c := range cases {
		checkAgainstBruteForce(t, r, c.name, c.meshes...)
	}
}

func TestBVHStructure(t *testing.T) {
	r := newRand(t)
	tb, err := geom.BuildTables([]geom.Mesh{soupMesh(r, 2000, .05)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScene(tb)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, tb.NumFaces())
	var walk func(ni int32, box aabb)
	walk = func(ni int32, parent aabb) {
		n := &s.bvh.nodes[ni]
		for k := range 3 {
			if n.box.lo[k] < parent.lo[k] || n.box.hi[k] > parent.hi[k] {
				t.Fatalf("node %d escapes its parent", ni)
			}
		}
		if n.right < 0 {
			if n.count < 1 || n.count > maxLeaf {
				t.Fatalf("leaf %d holds %d triangles", ni, n.count)
			}
			for _, p := range s.bvh.prims[n.start : n.start+n.count] {
				seen[p]++
				pb := triBox(&s.tris[p])
				for k := range 3 {
					if pb.lo[k] < n.box.lo[k] || pb.hi[k] > n.box.hi[k] {
						t.Fatalf("prim %d escapes leaf %d", p, ni)
					}
				}
			}
			return
		}
		walk(ni+1, n.box)
		walk(n.right, n.box)
	}
	inf := math.Inf(1)
	walk(0, aabb{lo: [3]float64{-inf, -inf, -inf}, hi: [3]float64{inf, inf, inf}})
	for p, c := range seen {
		if c != 1 {
			t.Fatalf("prim %d appears %d times", p, c)
		}
	}
}

func TestBVHIdenticalCentroids(t *testing.T) {
	// Twenty copies of one triangle: SAH has no plane, the build halves.
	var m geom.Mesh
	for i := range 20 {
		m.Vertices = append(m.Vertices, 0, 0, 0, 1, 0, 0, 0, 1, 0)
		m.Faces = append(m.Faces, int32(3*i), int32(3*i+1), int32(3*i+2))
	}
	fast, slow := scenes(t, m)
	o := []float32{.25, .25, -1}
	d := []float32{0, 0, 1}
	a, _ := fast.Intersect(o, d, nil, nil, geom.FlagsAll)
	b, _ := slow.Intersect(o, d, nil, nil, geom.FlagsAll)
	if !sameHits(a, b) || a.PrimID[0] != 0 || a.T[0] != 1 {
		t.Fatalf("tie among copies: BVH prim %d, brute prim %d", a.PrimID[0], b.PrimID[0])
	}
}
