package accel

import (
	"math"
)

// Quad (4-wide, quantized) layout. A quad node stands for a child-pair node
// at even depth of the collapsed binary tree; its up to four slots are the
// binary node's children, each internal child opened once more (so a quad
// node covers two binary levels). Node words:
//
//	0..2    origin x y z (float): the per-axis minimum of the slot boxes
//	3       ex | ey<<8 | ez<<16 | slots<<24; e is the biased float exponent
//	        of the axis step s = 2^(e−127)
//	4..9    quantized planes, byte c for slot c: lo.x hi.x lo.y hi.y lo.z hi.z
//	10..13  slot references (≥ 0 quad node, < 0 leaf as LeafRef; 0 unused)
//	14, 15  0
//
// Slot c's box is exactly origin + q·s per plane (real arithmetic); it
// contains the slot's inflated box: q_lo = floor(x/s − 2^-30) and q_hi =
// ceil(x/s + 2^-30) for x = plane − origin in float64 (x/s is off by less
// than 2^-45 steps, so the 2^-30 keeps the rounding conservative), and s is
// the smallest power of two with 254·s ≥ extent (at least 2^-126).
const (
	quadSlots = 4
	quadSlack = 0x1p-30
)

// quadStep returns the biased exponent byte of the step for an axis extent.
func quadStep(ext float64) uint32 {
	target := float64(ext / 254)
	k := -126
	if target > 0 {
		b := math.Float64bits(target)
		e := int(b>>52&0x7ff) - 1023
		if b>>52&0x7ff != 0 {
			k = e
			if b&(1<<52-1) != 0 {
				k = e + 1
			}
		}
	}
	k = min(max(k, -126), 127)
	return uint32(k + 127)
}

// quantizeSlots computes origin, exponent bytes and plane bytes of up to four
// inflated slot boxes (lo, hi).
func quantizeSlots(lo, hi [][3]float32) (origin [3]float32, exps [3]uint32, q [6]uint32) {
	for a := range 3 {
		L, H := lo[0][a], hi[0][a]
		for c := 1; c < len(lo); c++ {
			L = min2(L, lo[c][a])
			H = max2(H, hi[c][a])
		}
		e := quadStep(float64(H) - float64(L))
		s := math.Float64frombits(uint64(int64(e)-127+1023) << 52)
		origin[a], exps[a] = L, e
		for c := range lo {
			ql := math.Floor(float64(float64(float64(lo[c][a])-float64(L))/s) - quadSlack)
			qh := math.Ceil(float64(float64(float64(hi[c][a])-float64(L))/s) + quadSlack)
			q[2*a] |= uint32(min(max(ql, 0), 255)) << (8 * c)
			q[2*a+1] |= uint32(min(max(qh, 0), 255)) << (8 * c)
		}
	}
	return origin, exps, q
}

// QuadNode is one decoded quad node: slot boxes in float64 (exact decoded
// values) and references.
type QuadNode struct {
	Slots int
	Lo    [quadSlots][3]float64
	Hi    [quadSlots][3]float64
	Ref   [quadSlots]int32
	// Raw fields, as the traversal uses them.
	Origin [3]float32
	Step   [3]float32
	Q      [6]uint32
}

// QuadNode decodes quad node i of a Width-4 layout.
func (l *Layout) QuadNode(i int) QuadNode {
	w := l.Nodes[i*NodeWords : (i+1)*NodeWords]
	var n QuadNode
	n.Slots = int(w[3] >> 24)
	for a := range 3 {
		n.Origin[a] = math.Float32frombits(w[a])
		n.Step[a] = math.Float32frombits(((w[3] >> (8 * a)) & 0xff) << 23)
	}
	copy(n.Q[:], w[4:10])
	for c := range quadSlots {
		n.Ref[c] = int32(w[10+c])
		for a := range 3 {
			ql := float64((n.Q[2*a] >> (8 * c)) & 0xff)
			qh := float64((n.Q[2*a+1] >> (8 * c)) & 0xff)
			n.Lo[c][a] = float64(n.Origin[a]) + ql*float64(n.Step[a])
			n.Hi[c][a] = float64(n.Origin[a]) + qh*float64(n.Step[a])
		}
	}
	return n
}

// leafish reports whether radix-tree node c is a leaf of the collapsed tree.
func (tr *hostTree) leafish(c int32) bool {
	return int(c) >= tr.n-1 || tr.info[c]&1 != 0
}

func (tr *hostTree) leafRefOf(c int32) int32 {
	if int(c) >= tr.n-1 {
		return LeafRef(int(c)-(tr.n-1), 1)
	}
	return LeafRef(int(tr.first[c]), int(tr.count[c]))
}

// emitQuad produces the quad layout (nodes only; the caller fills the rest).
func (tr *hostTree) emitQuad(lay *Layout, opt Options) {
	n := tr.n
	if n == 1 {
		lo, hi := inflate(&tr.box[0])
		lay.NumNodes, lay.Height = 1, 1
		lay.Nodes = make([]uint32, NodeWords)
		putQuad(lay.Nodes, 0, [][3]float32{lo}, [][3]float32{hi}, []int32{LeafRef(0, 1)})
		return
	}
	depth := make([]int32, n-1)
	for i := 1; i < n-1; i++ { // parents of internal nodes are internal; walk up
		d := int32(0)
		for a := tr.parent[i]; a >= 0; a = tr.parent[a] {
			d++
		}
		depth[i] = d
	}
	isQuad := func(i int) bool { return depth[i]%2 == 0 && tr.emitted(i, opt.MaxLeafSize) }
	idx := make([]int32, n-1)
	m := int32(0)
	for i := range n - 1 {
		idx[i] = m
		if isQuad(i) {
			m++
		}
	}
	lay.NumNodes = int(m)
	lay.Height = int(tr.info[0]>>1+1) / 2
	lay.Nodes = make([]uint32, int(m)*NodeWords)
	for i := range n - 1 {
		if !isQuad(i) {
			continue
		}
		var los, his [][3]float32
		var refs []int32
		add := func(c int32) {
			lo, hi := inflate(&tr.box[c])
			los, his = append(los, lo), append(his, hi)
			if tr.leafish(c) {
				refs = append(refs, tr.leafRefOf(c))
			} else {
				refs = append(refs, idx[c])
			}
		}
		for s := range 2 {
			c := tr.child[2*i+s]
			if tr.leafish(c) {
				add(c)
				continue
			}
			add(tr.child[2*c])
			add(tr.child[2*c+1])
		}
		putQuad(lay.Nodes, int(idx[i]), los, his, refs)
	}
}

// putQuad quantizes and writes one quad node.
func putQuad(dst []uint32, i int, lo, hi [][3]float32, refs []int32) {
	w := dst[i*NodeWords : (i+1)*NodeWords]
	origin, exps, q := quantizeSlots(lo, hi)
	for a := range 3 {
		w[a] = math.Float32bits(origin[a])
	}
	w[3] = exps[0] | exps[1]<<8 | exps[2]<<16 | uint32(len(refs))<<24
	copy(w[4:10], q[:])
	for c := range quadSlots {
		w[10+c] = 0
		if c < len(refs) {
			w[10+c] = uint32(refs[c])
		}
	}
	w[14], w[15] = 0, 0
}
