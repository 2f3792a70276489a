package accel

import (
	"fmt"
	"math"
)

// Traversal layout constants. They mirror ptx/src/rayd.cuh; a change on one
// side needs the same change on the other.
const (
	// NodeWords is the size of one child-pair node in 32-bit words (64 bytes).
	NodeWords = 16
	// TriWords is the size of one triangle record in 32-bit words (48 bytes).
	TriWords = 12
	// MaxLeafSize is the largest number of triangles a leaf may hold (the
	// leaf reference stores count−1 in LeafCountBits bits).
	MaxLeafSize = 8
	// LeafCountBits is the number of low bits of a leaf payload holding count−1.
	LeafCountBits = 3
	// MaxTriangles bounds the triangle count of one BVH: a leaf payload keeps
	// the first triangle in the remaining 28 bits.
	MaxTriangles = 1 << (31 - LeafCountBits)
	// MaxDepth is the traversal stack depth; a taller tree fails the build.
	MaxDepth = 64
	// InflateScale is the relative inflation of every stored box (2^-18,
	// 64 float32 units in the last place of the box's largest coordinate);
	// the traversal adds the same relative amount of the ray origin's
	// largest coordinate. Together they cover every rounding of the slab test
	// and of the watertight test, so BVH traversal finds exactly the hits of
	// a brute-force loop.
	InflateScale float32 = 1.0 / (1 << 18)
	// InflateFloor is the smallest absolute inflation of a stored box.
	InflateFloor float32 = 0x1p-126
)

// Status flags reported by a device build (Layout.Flags / BVH.Flags).
const (
	// FlagDepthExceeded: the collapsed tree is taller than MaxDepth.
	FlagDepthExceeded uint32 = 1
)

// Node is one decoded child-pair node. A child reference Ref[k] ≥ 0 is the
// index of another node; a negative reference is a leaf (see DecodeLeaf).
type Node struct {
	Lo, Hi [2][3]float32 // child boxes (inflated)
	Ref    [2]int32
}

// Triangle is one decoded triangle record: its three vertices in global
// order, the global prim id, the mesh (shape) id and the local face index.
type Triangle struct {
	V                   [3][3]float32
	Prim, Shape, LocalP int32
}

// Layout is a BVH in traversal layout, as the host builds it and as a device
// build downloads it. Nodes holds NumNodes nodes of NodeWords words; node 0
// is the root (the root box itself is never tested). Width 4 nodes are
// described at QuadNode, Width 8 nodes (WideNodeWords words each) at
// WideNodeWords; word layout of a Width 2 (child-pair) node (float
// bits except the refs):
//
//	0..3   child 0: lo.x hi.x lo.y hi.y
//	4..7   child 1: lo.x hi.x lo.y hi.y
//	8..11  child 0 lo.z hi.z, child 1 lo.z hi.z
//	12..15 ref0 ref1 0 0
//
// Tris holds NumTris triangle records of TriWords words in leaf order
// (the Morton order of the sort): v0.xyz prim | v1.xyz shape | v2.xyz local.
// Order[k] is the global prim id stored in slot k.
type Layout struct {
	Width    int // 2: child-pair nodes (Node); 4: quantized quad nodes (QuadNode); 8: wide nodes (WideNode)
	NumTris  int
	NumNodes int
	Height   int    // child-pair nodes on the longest root-to-leaf path
	Flags    uint32 // FlagDepthExceeded, ...
	Nodes    []uint32
	Tris     []uint32
	Order    []int32
}

// LeafRef encodes a leaf of count triangles starting at slot first.
func LeafRef(first, count int) int32 {
	return ^int32(first<<LeafCountBits | (count - 1))
}

// DecodeLeaf returns the first slot and the triangle count of leaf reference
// ref (ref < 0).
func DecodeLeaf(ref int32) (first, count int) {
	p := ^ref
	return int(p >> LeafCountBits), int(p&(1<<LeafCountBits-1)) + 1
}

// Node decodes node i.
func (l *Layout) Node(i int) Node {
	w := l.Nodes[i*NodeWords : (i+1)*NodeWords]
	f := func(k int) float32 { return math.Float32frombits(w[k]) }
	return Node{
		Lo:  [2][3]float32{{f(0), f(2), f(8)}, {f(4), f(6), f(10)}},
		Hi:  [2][3]float32{{f(1), f(3), f(9)}, {f(5), f(7), f(11)}},
		Ref: [2]int32{int32(w[12]), int32(w[13])},
	}
}

// Triangle decodes triangle slot k.
func (l *Layout) Triangle(k int) Triangle {
	w := l.Tris[k*TriWords : (k+1)*TriWords]
	var t Triangle
	for v := range 3 {
		for c := range 3 {
			t.V[v][c] = math.Float32frombits(w[4*v+c])
		}
	}
	t.Prim, t.Shape, t.LocalP = int32(w[3]), int32(w[7]), int32(w[11])
	return t
}

// putNode encodes node n at index i.
func putNode(dst []uint32, i int, n Node) {
	w := dst[i*NodeWords : (i+1)*NodeWords]
	b := math.Float32bits
	for c := range 2 {
		w[4*c+0], w[4*c+1] = b(n.Lo[c][0]), b(n.Hi[c][0])
		w[4*c+2], w[4*c+3] = b(n.Lo[c][1]), b(n.Hi[c][1])
		w[8+2*c], w[9+2*c] = b(n.Lo[c][2]), b(n.Hi[c][2])
	}
	w[12], w[13], w[14], w[15] = uint32(n.Ref[0]), uint32(n.Ref[1]), 0, 0
}

// putTri encodes the triangle of global face f of (verts, faces) at slot k.
func putTri(dst []uint32, k int, verts []float32, faces []int32, f int32, shape, local int32) {
	w := dst[k*TriWords : (k+1)*TriWords]
	for v := range 3 {
		vi := int(faces[3*int(f)+v])
		for c := range 3 {
			w[4*v+c] = math.Float32bits(verts[3*vi+c])
		}
	}
	w[3], w[7], w[11] = uint32(f), uint32(shape), uint32(local)
}

// Equal reports the first difference between two layouts (nil when they
// are bit for bit identical).
func (l *Layout) Equal(o *Layout) error {
	switch {
	case l.Width != o.Width:
		return fmt.Errorf("accel: Width %d != %d", l.Width, o.Width)
	case l.NumTris != o.NumTris:
		return fmt.Errorf("accel: NumTris %d != %d", l.NumTris, o.NumTris)
	case l.NumNodes != o.NumNodes:
		return fmt.Errorf("accel: NumNodes %d != %d", l.NumNodes, o.NumNodes)
	case l.Height != o.Height:
		return fmt.Errorf("accel: Height %d != %d", l.Height, o.Height)
	case l.Flags != o.Flags:
		return fmt.Errorf("accel: Flags %#x != %#x", l.Flags, o.Flags)
	}
	nw := nodeWords(l.Width)
	for i := range l.NumNodes * nw {
		if l.Nodes[i] != o.Nodes[i] {
			return fmt.Errorf("accel: node %d word %d: %#08x != %#08x", i/nw, i%nw, l.Nodes[i], o.Nodes[i])
		}
	}
	for i := range l.NumTris * TriWords {
		if l.Tris[i] != o.Tris[i] {
			return fmt.Errorf("accel: triangle slot %d word %d: %#08x != %#08x", i/TriWords, i%TriWords, l.Tris[i], o.Tris[i])
		}
	}
	return nil
}
