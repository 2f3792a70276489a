package accel

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

func TestRadixSortPairsIsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 255, 4097, 100000} {
		keys := make([]uint32, n)
		vals := make([]int32, n)
		for i := range keys {
			keys[i] = rng.Uint32() & (1<<30 - 1)
			if i%3 == 0 { // many duplicates
				keys[i] &= 0xFF00
			}
			vals[i] = int32(i)
		}
		type kv struct {
			k uint32
			v int32
		}
		want := make([]kv, n)
		for i := range want {
			want[i] = kv{keys[i], vals[i]}
		}
		sort.SliceStable(want, func(a, b int) bool { return want[a].k < want[b].k })
		radixSortPairs(keys, vals)
		for i := range want {
			if keys[i] != want[i].k || vals[i] != want[i].v {
				t.Fatalf("n=%d: slot %d = (%#x,%d), want (%#x,%d)", n, i, keys[i], vals[i], want[i].k, want[i].v)
			}
		}
	}
}

func TestMortonCode(t *testing.T) {
	lo, hi := [3]float32{0, 0, 0}, [3]float32{1, 1, 1}
	box := func(x, y, z float32) [6]float32 { return [6]float32{x, y, z, x, y, z} }
	if got := mortonCode(box(0, 0, 0), lo, hi); got != 0 {
		t.Errorf("origin code %#x", got)
	}
	if got := mortonCode(box(1, 1, 1), lo, hi); got != 1<<30-1 {
		t.Errorf("far corner code %#x", got)
	}
	if got := mortonCode(box(1, 0, 0), lo, hi); got != expandBits(1023)<<2 {
		t.Errorf("x corner code %#x", got)
	}
	// Out-of-range and flat axes: clamped, and 0.5 for a zero extent.
	if got, want := mortonCode(box(-5, 7, 3), lo, [3]float32{1, 1, 0}), expandBits(1023)<<1|expandBits(511); got != want {
		t.Errorf("clamped code %#x, want %#x", got, want)
	}
	for _, f := range []float32{-1e30, -0.0, 0, 1e-40, 3.5, float32(math.Inf(-1))} {
		if orderedFloat(orderedKey(f)) != f || (f < 1 && orderedKey(f) >= orderedKey(1)) {
			t.Errorf("ordered key round trip of %g", f)
		}
	}
	if orderedKey(float32(math.Copysign(0, -1))) >= orderedKey(0) {
		t.Error("-0 must order below +0")
	}
}

// checkKarras verifies the radix tree: ranges nest, children partition their
// parent's range, and every leaf hangs below exactly one parent.
func checkKarras(t *testing.T, tr *hostTree) {
	t.Helper()
	n := tr.n
	rng := func(c int32) (int32, int32) {
		if int(c) >= n-1 {
			k := c - int32(n-1)
			return k, 1
		}
		return tr.first[c], tr.count[c]
	}
	if n > 1 && (tr.first[0] != 0 || int(tr.count[0]) != n) {
		t.Fatalf("root range [%d,+%d)", tr.first[0], tr.count[0])
	}
	for i := range n - 1 {
		f, c := tr.first[i], tr.count[i]
		lf, lc := rng(tr.child[2*i])
		rf, rc := rng(tr.child[2*i+1])
		if lf != f || rf != lf+lc || rf+rc != f+c {
			t.Fatalf("node %d [%d,+%d) children [%d,+%d) [%d,+%d)", i, f, c, lf, lc, rf, rc)
		}
		for _, ch := range tr.child[2*i : 2*i+2] {
			if tr.parent[ch] != int32(i) {
				t.Fatalf("parent of %d is %d, want %d", ch, tr.parent[ch], i)
			}
		}
	}
}

func TestKarrasTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 3, 5, 64, 1000} {
		for _, dup := range []uint32{1 << 30, 16, 1} { // distinct-ish, few values, all equal
			keys := make([]uint32, n)
			vals := make([]int32, n)
			for i := range keys {
				keys[i] = rng.Uint32() % dup
				vals[i] = int32(i)
			}
			radixSortPairs(keys, vals)
			checkKarras(t, karras(keys, vals))
		}
	}
}

func TestBuildHostValidates(t *testing.T) {
	one := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	degenerate := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 1, 1}, Faces: []int32{0, 1, 1, 0, 0, 0, 1, 1, 0}}
	same := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}}
	for range 300 { // 300 identical triangles: all Morton codes equal
		same.Faces = append(same.Faces, 0, 1, 2)
	}
	cases := map[string][]geom.Mesh{
		"one":        {one},
		"two meshes": {one, one},
		"degenerate": {degenerate},
		"identical":  {same},
		"grid":       {gridMesh(40, 2)},
		"cloud":      {cloudMesh(5000, 0.005, 1)},
		"mixed":      {gridMesh(7, 3), cloudMesh(100, 0.1, 2), one},
	}
	for name, meshes := range cases {
		for _, opt := range []Options{{MaxLeafSize: 1}, {MaxLeafSize: 2}, {MaxLeafSize: 4}, {MaxLeafSize: 8},
			{MaxLeafSize: 1, Width: 4}, {MaxLeafSize: 4, Width: 4}, {MaxLeafSize: 8, TraversalCost: 3, Width: 4},
			{MaxLeafSize: 1, Width: 8}, {MaxLeafSize: 4, Width: 8}, {MaxLeafSize: 4, TraversalCost: 3, Width: 8}} {
			leaf := opt.MaxLeafSize
			tb := tables(t, meshes...)
			lay, err := BuildHost(tb, opt)
			if err != nil {
				t.Fatalf("%s leaf %d: %v", name, leaf, err)
			}
			if err := Validate(lay); err != nil {
				t.Fatalf("%s leaf %d: %v", name, leaf, err)
			}
			for k := range lay.NumTris {
				tri := lay.Triangle(k)
				f := int(tri.Prim)
				if tri.Shape != tb.FaceShape[f] || tri.LocalP != tb.FaceLocal[f] {
					t.Fatalf("%s: slot %d ids (%d,%d), want (%d,%d)", name, k, tri.Shape, tri.LocalP, tb.FaceShape[f], tb.FaceLocal[f])
				}
				p0, p1, p2 := tb.Triangle(f)
				if tri.V != [3][3]float32{p0, p1, p2} {
					t.Fatalf("%s: slot %d vertices differ from face %d", name, k, f)
				}
			}
			// Deterministic: a second build is identical.
			again, _ := BuildHost(tb, opt)
			if err := lay.Equal(again); err != nil {
				t.Fatalf("%s: rebuild differs: %v", name, err)
			}
		}
	}
}

func TestValidateRejects(t *testing.T) {
	for _, width := range []int{2, 4} {
		testValidateRejects(t, width)
	}
}

func testValidateRejects(t *testing.T, width int) {
	lay, err := BuildHost(tables(t, gridMesh(6, 2)), Options{Width: width})
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func(mut func(l *Layout)) *Layout {
		c := *lay
		c.Nodes = slices.Clone(lay.Nodes)
		c.Tris = slices.Clone(lay.Tris)
		mut(&c)
		return &c
	}
	bad := map[string]*Layout{
		"shrunk box": corrupt(func(l *Layout) {
			if width == 2 {
				l.Nodes[1] = math.Float32bits(-2)
			} else {
				l.Nodes[5] = 0 // every slot's hi.x at the origin
			}
		}),
		"dup prim": corrupt(func(l *Layout) { l.Tris[3] = l.Tris[TriWords+3] }),
		"bad ref": corrupt(func(l *Layout) {
			if width == 2 {
				l.Nodes[12] = uint32(l.NumNodes)
			} else {
				l.Nodes[10] = uint32(l.NumNodes)
			}
		}),
		"height": corrupt(func(l *Layout) { l.Height++ }),
		"flag":   corrupt(func(l *Layout) { l.Flags = FlagDepthExceeded }),
	}
	for name, l := range bad {
		if Validate(l) == nil {
			t.Errorf("width %d %s: Validate accepted a corrupt layout", width, name)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	// A tall tree needs many equal-prefix splits; leaves of one triangle and a
	// geometric point series along one axis give the deepest Karras tree.
	var m geom.Mesh
	x := float32(1)
	for i := range 200 {
		m.Vertices = append(m.Vertices, x, 0, 0, x, 1, 0, x, 0, 1)
		m.Faces = append(m.Faces, int32(3*i), int32(3*i+1), int32(3*i+2))
		x *= 0.5
	}
	lay, err := BuildHost(tables(t, m), Options{MaxLeafSize: 1})
	if lay.Height > MaxDepth {
		if !errors.Is(err, ErrDepthExceeded) || lay.Flags&FlagDepthExceeded == 0 {
			t.Fatalf("height %d accepted (err %v)", lay.Height, err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
}

func TestLeafRef(t *testing.T) {
	for _, c := range [][2]int{{0, 1}, {5, 8}, {MaxTriangles - 1, 3}} {
		ref := LeafRef(c[0], c[1])
		if ref >= 0 {
			t.Fatalf("leaf ref %d not negative", ref)
		}
		if f, n := DecodeLeaf(ref); f != c[0] || n != c[1] {
			t.Fatalf("DecodeLeaf(LeafRef(%d,%d)) = %d,%d", c[0], c[1], f, n)
		}
	}
}
