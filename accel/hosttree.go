package accel

import (
	"math"
	"math/bits"
)

// delta is the Karras common-prefix length of sorted keys i and j: the
// leading zeros of ki^kj, or 32 + the leading zeros of i^j for equal keys,
// −1 when j is out of range.
func delta(keys []uint32, i, j int) int {
	if j < 0 || j >= len(keys) {
		return -1
	}
	ki, kj := keys[i], keys[j]
	if ki == kj {
		return 32 + bits.LeadingZeros32(uint32(i^j))
	}
	return bits.LeadingZeros32(ki ^ kj)
}

// karrasNode computes internal node i of the radix tree over n sorted keys:
// its two children (node numbers) and the first slot and size of its range.
func karrasNode(keys []uint32, i int) (left, right, first, count int) {
	n := len(keys)
	d := 1
	if delta(keys, i, i+1)-delta(keys, i, i-1) < 0 {
		d = -1
	}
	dmin := delta(keys, i, i-d)
	lmax := 2
	for delta(keys, i, i+lmax*d) > dmin {
		lmax *= 2
	}
	l := 0
	for t := lmax / 2; t >= 1; t /= 2 {
		if delta(keys, i, i+(l+t)*d) > dmin {
			l += t
		}
	}
	j := i + l*d
	dnode := delta(keys, i, j)
	s := 0
	for t := l; t > 1; {
		t = (t + 1) >> 1
		if delta(keys, i, i+(s+t)*d) > dnode {
			s += t
		}
	}
	gamma := i + s*d + min(d, 0)
	lo, hi := min(i, j), max(i, j)
	left, right = gamma, gamma+1
	if lo == gamma {
		left = n - 1 + gamma
	}
	if hi == gamma+1 {
		right = n - 1 + gamma + 1
	}
	return left, right, lo, hi - lo + 1
}

// karras builds the radix tree of the sorted keys.
func karras(keys []uint32, order []int32) *hostTree {
	n := len(keys)
	tr := &hostTree{
		n: n, keys: keys, order: order,
		child: make([]int32, 2*(n-1)), parent: make([]int32, 2*n-1),
		first: make([]int32, n-1), count: make([]int32, n-1),
		box: make([][6]float32, 2*n-1), cost: make([]float32, 2*n-1), info: make([]int32, 2*n-1),
	}
	tr.parent[0] = -1
	for i := range n - 1 {
		l, r, f, c := karrasNode(keys, i)
		tr.child[2*i], tr.child[2*i+1] = int32(l), int32(r)
		tr.parent[l], tr.parent[r] = int32(i), int32(i)
		tr.first[i], tr.count[i] = int32(f), int32(c)
	}
	return tr
}

// halfArea is dx·dy + dy·dz + dz·dx of a box (f32, each product rounded).
func halfArea(b *[6]float32) float32 {
	dx := float32(b[3] - b[0])
	dy := float32(b[4] - b[1])
	dz := float32(b[5] - b[2])
	return float32(float32(float32(dx*dy)+float32(dy*dz)) + float32(dz*dx))
}

// mergeBoxes is the device's union of two child boxes (left first).
func mergeBoxes(a, b *[6]float32) [6]float32 {
	var m [6]float32
	for c := range 3 {
		m[c] = min2(a[c], b[c])
		m[3+c] = max2(a[3+c], b[3+c])
	}
	return m
}

// leafInfo is the info word of a Karras leaf: height 0, leaf.
const leafInfo = 1

// combine computes internal node i from its children exactly as the device's
// bottom-up pass does: box, SAH cost, leaf choice and collapsed height.
// SAH: split = Ct·A + C(l) + C(r); leaf = (Ci·A)·count when count ≤
// MaxLeafSize; the node becomes a leaf when leaf ≤ split (never the root).
func (tr *hostTree) combine(i int, opt Options) {
	l, r := tr.child[2*i], tr.child[2*i+1]
	tr.box[i] = mergeBoxes(&tr.box[l], &tr.box[r])
	a := halfArea(&tr.box[i])
	split := float32(float32(float32(opt.TraversalCost*a)+tr.cost[l]) + tr.cost[r])
	cost := split
	leaf := false
	if c := tr.count[i]; int(c) <= opt.MaxLeafSize && i != 0 {
		lc := float32(float32(opt.IntersectCost*a) * float32(c))
		if lc <= split {
			cost, leaf = lc, true
		}
	}
	tr.cost[i] = cost
	if leaf {
		tr.info[i] = leafInfo
	} else {
		h := 1 + max(tr.info[l]>>1, tr.info[r]>>1)
		tr.info[i] = h << 1
	}
}

// bottomUp fills boxes, costs and info for every node (children before
// parents; the device gets the same values from its atomic counters).
func (tr *hostTree) bottomUp(faceBoxes [][6]float32, opt Options) {
	n := tr.n
	for k := range n {
		b := faceBoxes[tr.order[k]]
		tr.box[n-1+k] = b
		tr.cost[n-1+k] = float32(opt.IntersectCost * halfArea(&b))
		tr.info[n-1+k] = leafInfo
	}
	if n == 1 {
		return
	}
	// Post-order over the internal nodes with an explicit stack.
	type frame struct {
		node int32
		done bool
	}
	stack := []frame{{0, false}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.done {
			tr.combine(int(f.node), opt)
			continue
		}
		stack = append(stack, frame{f.node, true})
		for c := range 2 {
			if ch := tr.child[2*f.node+int32(c)]; int(ch) < n-1 {
				stack = append(stack, frame{ch, false})
			}
		}
	}
}

// emitted reports whether internal node i becomes a child-pair node: the
// root always; any other node when neither it nor an ancestor chose to be a
// leaf. Only ancestors that may be leaves (count ≤ maxLeaf) are walked.
func (tr *hostTree) emitted(i int, maxLeaf int) bool {
	if i == 0 {
		return true
	}
	if tr.info[i]&1 != 0 {
		return false
	}
	for a := tr.parent[i]; a > 0 && int(tr.count[a]) <= maxLeaf; a = tr.parent[a] {
		if tr.info[a]&1 != 0 {
			return false
		}
	}
	return true
}

// inflate returns the stored (inflated) form of a box: each side moved out
// by max(InflateScale·m, InflateFloor), m the largest |coordinate|.
func inflate(b *[6]float32) (lo, hi [3]float32) {
	m := float32(0)
	for c := range 6 {
		m = max2(m, float32(math.Abs(float64(b[c]))))
	}
	d := max2(float32(m*InflateScale), InflateFloor)
	for c := range 3 {
		lo[c] = float32(b[c] - d)
		hi[c] = float32(b[3+c] + d)
	}
	return lo, hi
}

// childRef is the reference stored for child c of an emitted node.
func (tr *hostTree) childRef(c int32, idx []int32) int32 {
	n := int32(tr.n)
	switch {
	case c >= n-1:
		return LeafRef(int(c-(n-1)), 1)
	case tr.info[c]&1 != 0:
		return LeafRef(int(tr.first[c]), int(tr.count[c]))
	}
	return idx[c]
}

// emit produces the traversal layout.
func (tr *hostTree) emit(verts []float32, faces, shape, local []int32, opt Options) *Layout {
	n := tr.n
	lay := &Layout{Width: opt.Width, NumTris: n, Tris: make([]uint32, n*TriWords), Order: tr.order}
	for k, f := range tr.order {
		sh, lo := int32(-1), int32(-1)
		if shape != nil {
			sh, lo = shape[f], local[f]
		}
		putTri(lay.Tris, k, verts, faces, f, sh, lo)
	}
	if n > 1 && int(tr.info[0]>>1) > MaxDepth {
		lay.Flags |= FlagDepthExceeded
	}
	switch opt.Width {
	case 4:
		tr.emitQuad(lay, opt)
		return lay
	case 8:
		tr.emitWide(lay, verts, faces, shape, local)
		return lay
	}
	if n == 1 {
		lo, hi := inflate(&tr.box[0])
		lay.NumNodes, lay.Height = 1, 1
		lay.Nodes = make([]uint32, NodeWords)
		putNode(lay.Nodes, 0, Node{Lo: [2][3]float32{lo, lo}, Hi: [2][3]float32{hi, hi}, Ref: [2]int32{LeafRef(0, 1), LeafRef(0, 1)}})
		return lay
	}
	idx := make([]int32, n-1)
	m := int32(0)
	for i := range n - 1 {
		idx[i] = m
		if tr.emitted(i, opt.MaxLeafSize) {
			m++
		}
	}
	lay.NumNodes = int(m)
	lay.Height = int(tr.info[0] >> 1)
	lay.Nodes = make([]uint32, int(m)*NodeWords)
	for i := range n - 1 {
		if !tr.emitted(i, opt.MaxLeafSize) {
			continue
		}
		var nd Node
		for c := range 2 {
			ch := tr.child[2*i+c]
			nd.Lo[c], nd.Hi[c] = inflate(&tr.box[ch])
			nd.Ref[c] = tr.childRef(ch, idx)
		}
		putNode(lay.Nodes, int(idx[i]), nd)
	}
	return lay
}
