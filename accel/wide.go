package accel

import "math"

// Compressed 8-wide layout (Width 8; Ylitie, Karras and Laine, "Efficient
// incoherent ray traversal on GPUs through compressed wide BVHs", HPG 2017).
// A wide node stands for a node of the collapsed binary tree opened greedily
// until it has up to eight children (hostwide.go); it holds the children's
// boxes quantized to bytes in a per-node frame, one 8-bit descriptor per
// child and two base indices. Node words (80 bytes, five float4):
//
//	0..2    origin x y z (float): the per-axis minimum of the child boxes
//	3       ex | ey<<8 | ez<<16 | imask<<24; e is the biased float exponent
//	        of the axis step s = 2^(e−127); imask bit c: slot c is a wide node
//	4       child base: the wide node index of the first internal child; the
//	        internal children follow in slot order (node group)
//	5       triangle base: the first triangle slot of the node's leaves; the
//	        leaf triangles follow in slot order (triangle group)
//	6, 7    leaf descriptors, byte c for slot c: count | offset<<3 (count
//	        1..WideMaxLeafSize triangles at triangle base + offset; 0 for an
//	        internal or empty slot)
//	8..19   quantized planes, two words per plane (slots 0..3, 4..7), in the
//	        order lo.x hi.x lo.y hi.y lo.z hi.z
//
// Slot c's box is exactly origin + q·s per plane, a superset of the child's
// inflated box (the quad node's quantization). Slots are assigned by octant
// (wideAssign): slot c is the child whose centroid lies farthest toward the
// corner whose sign along axis a is negative when bit a of c is set, so a
// ray with direction octant o (bit a: direction a negative) visits slots in
// the order k ^ (^o & 7), k = 0, 1, ..., roughly near to far. The triangle
// records are reordered so that each node's leaf triangles are contiguous
// (Layout.Order gives the prim id per slot).
const (
	// WideNodeWords is the size of one wide node in 32-bit words (80 bytes).
	WideNodeWords = 20
	// WideMaxLeafSize is the largest leaf of a Width 8 layout: eight leaves
	// of four triangles make a 32-bit triangle mask.
	WideMaxLeafSize = 4
	wideSlots       = 8
)

// nodeWords is the size of one node of a layout width in 32-bit words.
func nodeWords(width int) int {
	if width == 8 {
		return WideNodeWords
	}
	return NodeWords
}

// WideNode is one decoded wide node: slot boxes in float64 (exact decoded
// values), the per-slot references and the raw fields the traversal uses.
type WideNode struct {
	Lo, Hi    [wideSlots][3]float64
	Origin    [3]float32
	Step      [3]float32
	Exp       [3]uint32
	IMask     uint32
	ChildBase uint32
	TriBase   uint32
	Meta      [wideSlots]uint32 // leaf descriptors: count | offset<<3
	Q         [6][wideSlots]uint32
}

// Child returns slot c's reference: the wide node index (internal slot),
// the first triangle slot and count (leaf slot), or neither (empty slot).
func (n *WideNode) Child(c int) (node int32, first, count int, internal bool) {
	if n.IMask>>c&1 != 0 {
		bit := uint32(1)<<c - 1
		return int32(n.ChildBase) + int32(popcount8(n.IMask&bit)), 0, 0, true
	}
	m := n.Meta[c]
	return -1, int(n.TriBase + m>>3), int(m & 7), false
}

func popcount8(x uint32) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// WideNode decodes wide node i of a Width 8 layout.
func (l *Layout) WideNode(i int) WideNode {
	w := l.Nodes[i*WideNodeWords : (i+1)*WideNodeWords]
	var n WideNode
	for a := range 3 {
		n.Origin[a] = math.Float32frombits(w[a])
		n.Exp[a] = (w[3] >> (8 * a)) & 0xff
		n.Step[a] = math.Float32frombits(n.Exp[a] << 23)
	}
	n.IMask = w[3] >> 24
	n.ChildBase, n.TriBase = w[4], w[5]
	for c := range wideSlots {
		n.Meta[c] = (w[6+c/4] >> (8 * (c % 4))) & 0xff
		for p := range 6 {
			n.Q[p][c] = (w[8+2*p+c/4] >> (8 * (c % 4))) & 0xff
		}
		for a := range 3 {
			n.Lo[c][a] = float64(n.Origin[a]) + float64(n.Q[2*a][c])*float64(n.Step[a])
			n.Hi[c][a] = float64(n.Origin[a]) + float64(n.Q[2*a+1][c])*float64(n.Step[a])
		}
	}
	return n
}

// wideSlot is one child of a wide node being written: its inflated box and
// reference (node ≥ 0: internal; else a leaf of count triangles at offset).
type wideSlot struct {
	lo, hi        [3]float32
	internal      bool
	count, offset uint32
}

// putWide quantizes and writes wide node i; used[c] tells whether slot c is
// occupied.
func putWide(dst []uint32, i int, slots *[wideSlots]wideSlot, used [wideSlots]bool, childBase, triBase uint32) {
	w := dst[i*WideNodeWords : (i+1)*WideNodeWords]
	clear(w)
	var imask uint32
	for a := range 3 {
		var L, H float32
		first := true
		for c := range wideSlots {
			if !used[c] {
				continue
			}
			if first {
				L, H, first = slots[c].lo[a], slots[c].hi[a], false
				continue
			}
			L = min2(L, slots[c].lo[a])
			H = max2(H, slots[c].hi[a])
		}
		e := quadStep(float64(H) - float64(L))
		s := math.Float64frombits(uint64(int64(e)-127+1023) << 52)
		w[a] = math.Float32bits(L)
		w[3] |= e << (8 * a)
		for c := range wideSlots {
			if !used[c] {
				continue
			}
			ql := math.Floor(float64(float64(float64(slots[c].lo[a])-float64(L))/s) - quadSlack)
			qh := math.Ceil(float64(float64(float64(slots[c].hi[a])-float64(L))/s) + quadSlack)
			w[8+4*a+c/4] |= uint32(min(max(ql, 0), 255)) << (8 * (c % 4))
			w[10+4*a+c/4] |= uint32(min(max(qh, 0), 255)) << (8 * (c % 4))
		}
	}
	for c := range wideSlots {
		switch {
		case !used[c]:
		case slots[c].internal:
			imask |= 1 << c
		default:
			w[6+c/4] |= (slots[c].count | slots[c].offset<<3) << (8 * (c % 4))
		}
	}
	w[3] |= imask << 24
	w[4], w[5] = childBase, triBase
}
