package accel

import (
	"fmt"
	"math"
)

// Validate checks the invariants of a traversal layout, from the host build
// or downloaded from a device build:
//
//   - the buffers hold NumNodes nodes and NumTris triangles;
//   - the nodes reachable from node 0 form a tree that uses every node once;
//   - every leaf holds 1..MaxLeafSize triangles inside [0, NumTris), and the
//     leaves cover every slot exactly once (a one-triangle BVH repeats its
//     only leaf in both children of the root);
//   - the prim ids of the slots are a permutation of 0..NumTris−1;
//   - every box has lo ≤ hi and holds every triangle below it, and (Width 2)
//     every child box lies inside the box through which its node was reached;
//   - the height (child-pair nodes on the longest path) equals Height and is
//     at most MaxDepth, and FlagDepthExceeded is clear.
//
// The first violation found is returned.
func Validate(l *Layout) error {
	switch {
	case l.NumTris < 1 || l.NumNodes < 1:
		return fmt.Errorf("accel: Validate: %d triangles, %d nodes", l.NumTris, l.NumNodes)
	case len(l.Nodes) < l.NumNodes*nodeWords(l.Width):
		return fmt.Errorf("accel: Validate: %d node words for %d nodes", len(l.Nodes), l.NumNodes)
	case len(l.Tris) < l.NumTris*TriWords:
		return fmt.Errorf("accel: Validate: %d triangle words for %d triangles", len(l.Tris), l.NumTris)
	case l.Flags&FlagDepthExceeded != 0:
		return fmt.Errorf("accel: Validate: depth-exceeded flag set (height %d)", l.Height)
	}
	seenPrim := make([]bool, l.NumTris)
	for k := range l.NumTris {
		p := l.Triangle(k).Prim
		if p < 0 || int(p) >= l.NumTris || seenPrim[p] {
			return fmt.Errorf("accel: Validate: slot %d holds prim %d (out of range or repeated)", k, p)
		}
		seenPrim[p] = true
	}
	if l.Width != 2 && l.Width != 4 && l.Width != 8 {
		return fmt.Errorf("accel: Validate: width %d", l.Width)
	}
	v := validator{l: l, seenNode: make([]bool, l.NumNodes), seenSlot: make([]int8, l.NumTris)}
	inf := math.Inf(1)
	h, _, err := v.node(0, box64{lo: [3]float64{-inf, -inf, -inf}, hi: [3]float64{inf, inf, inf}}, 1)
	if err != nil {
		return err
	}
	for i, s := range v.seenNode {
		if !s {
			return fmt.Errorf("accel: Validate: node %d unreachable", i)
		}
	}
	want := int8(1)
	if l.NumTris == 1 && l.Width == 2 {
		want = 2
	}
	for k, c := range v.seenSlot {
		if c != want {
			return fmt.Errorf("accel: Validate: slot %d covered by %d leaves", k, c)
		}
	}
	if h != l.Height {
		return fmt.Errorf("accel: Validate: height %d, layout says %d", h, l.Height)
	}
	if h > MaxDepth {
		return fmt.Errorf("accel: Validate: height %d exceeds %d", h, MaxDepth)
	}
	return nil
}

type validator struct {
	l        *Layout
	seenNode []bool
	seenSlot []int8
}

// box64 is an exact (decoded) box.
type box64 struct{ lo, hi [3]float64 }

func emptyBox64() box64 {
	inf := math.Inf(1)
	return box64{lo: [3]float64{inf, inf, inf}, hi: [3]float64{-inf, -inf, -inf}}
}

func (b *box64) grow(o box64) {
	for c := range 3 {
		b.lo[c] = min(b.lo[c], o.lo[c])
		b.hi[c] = max(b.hi[c], o.hi[c])
	}
}

// contains reports whether o lies inside b (an empty o always does).
func (b box64) contains(o box64) bool {
	for c := range 3 {
		if o.lo[c] > o.hi[c] {
			return true
		}
		if o.lo[c] < b.lo[c] || o.hi[c] > b.hi[c] {
			return false
		}
	}
	return true
}

// slots returns node i's child boxes and references.
func (v *validator) slots(i int32) ([]box64, []int32, error) {
	if v.l.Width == 2 {
		nd := v.l.Node(int(i))
		var bs []box64
		for c := range 2 {
			var b box64
			for a := range 3 {
				b.lo[a], b.hi[a] = float64(nd.Lo[c][a]), float64(nd.Hi[c][a])
			}
			bs = append(bs, b)
		}
		return bs, nd.Ref[:], nil
	}
	if v.l.Width == 8 {
		return v.wideSlots(i)
	}
	q := v.l.QuadNode(int(i))
	if q.Slots < 1 || q.Slots > quadSlots {
		return nil, nil, fmt.Errorf("accel: Validate: quad node %d has %d slots", i, q.Slots)
	}
	var bs []box64
	for c := range q.Slots {
		bs = append(bs, box64{lo: q.Lo[c], hi: q.Hi[c]})
	}
	return bs, q.Ref[:q.Slots], nil
}

// wideSlots returns the occupied slots of wide node i as boxes and
// references (leaves as LeafRef).
func (v *validator) wideSlots(i int32) ([]box64, []int32, error) {
	w := v.l.WideNode(int(i))
	var bs []box64
	var refs []int32
	for c := range wideSlots {
		node, first, count, internal := w.Child(c)
		switch {
		case internal:
			refs = append(refs, node)
		case count == 0:
			continue
		case count > WideMaxLeafSize || w.Meta[c]>>3+uint32(count) > 32:
			return nil, nil, fmt.Errorf("accel: Validate: wide node %d slot %d descriptor %#x", i, c, w.Meta[c])
		default:
			refs = append(refs, LeafRef(first, count))
		}
		bs = append(bs, box64{lo: w.Lo[c], hi: w.Hi[c]})
	}
	if len(refs) == 0 {
		return nil, nil, fmt.Errorf("accel: Validate: wide node %d has no children", i)
	}
	return bs, refs, nil
}

// node checks node i, reached through the box parent at depth d, and returns
// the height of its subtree and the bounds of its triangles. Child-pair
// boxes must nest inside their parent's; every box (quantized ones too) must
// hold the triangles below it.
func (v *validator) node(i int32, parent box64, d int) (int, box64, error) {
	all := emptyBox64()
	if i < 0 || int(i) >= v.l.NumNodes {
		return 0, all, fmt.Errorf("accel: Validate: node reference %d out of [0,%d)", i, v.l.NumNodes)
	}
	if v.seenNode[i] {
		return 0, all, fmt.Errorf("accel: Validate: node %d reached twice", i)
	}
	if d > MaxDepth {
		return 0, all, fmt.Errorf("accel: Validate: depth %d exceeds %d at node %d", d, MaxDepth, i)
	}
	v.seenNode[i] = true
	boxes, refs, err := v.slots(i)
	if err != nil {
		return 0, all, err
	}
	h := 1
	for c, b := range boxes {
		for a := range 3 {
			if !(b.lo[a] <= b.hi[a]) {
				return 0, all, fmt.Errorf("accel: Validate: node %d child %d box %v–%v inverted", i, c, b.lo, b.hi)
			}
		}
		if v.l.Width == 2 && !parent.contains(b) {
			return 0, all, fmt.Errorf("accel: Validate: node %d child %d box %v–%v not inside %v–%v", i, c, b.lo, b.hi, parent.lo, parent.hi)
		}
		sub := emptyBox64()
		if ref := refs[c]; ref >= 0 {
			ch, cb, err := v.node(ref, b, d+1)
			if err != nil {
				return 0, all, err
			}
			h = max(h, ch+1)
			sub = cb
		} else {
			first, count := DecodeLeaf(ref)
			if count > MaxLeafSize || first+count > v.l.NumTris {
				return 0, all, fmt.Errorf("accel: Validate: node %d child %d leaf [%d,+%d) out of range", i, c, first, count)
			}
			for k := first; k < first+count; k++ {
				v.seenSlot[k]++
				for _, p := range v.l.Triangle(k).V {
					pb := box64{lo: [3]float64{float64(p[0]), float64(p[1]), float64(p[2])}}
					pb.hi = pb.lo
					sub.grow(pb)
				}
			}
		}
		if !b.contains(sub) {
			return 0, all, fmt.Errorf("accel: Validate: node %d child %d box %v–%v does not hold its triangles %v–%v", i, c, b.lo, b.hi, sub.lo, sub.hi)
		}
		all.grow(sub)
	}
	return h, all, nil
}
