package accel

import (
	"math"

	"github.com/rayd-go/rayd/geom"
)

// tlasBuilder builds top levels (BuildTLAS's tree) into caller-provided
// nodes and order. Its scratch is kept between builds, so a builder reused
// for every update of one instance set allocates nothing after the first.
type tlasBuilder struct {
	objs  []objectBox
	boxes []box64
	cents [][3]float64 // twice the box centres
	keys  []tlasKey    // selection scratch: one range's keys on its split axis
	order []int32
	words []uint32
	next  int // next free node
	depth int
}

// tlasKey is an instance's centroid coordinate on a split axis; keys order
// by coordinate, ties to the lower id.
type tlasKey struct {
	c  float64
	id int32
}

func keyLess(a, b tlasKey) bool { return a.c < b.c || (a.c == b.c && a.id < b.id) }

// build writes the top level over x into words (NodeWords·TLASNodeCount(n)
// words, every word written) and order (n entries) and returns the world
// slab test's scale and the tree's depth.
func (tb *tlasBuilder) build(x *geom.Instances, lo, hi [][3]float64, words []uint32, order []int32) (float32, int) {
	n := x.Len()
	tb.objs = tb.objs[:0]
	for g := range lo {
		tb.objs = append(tb.objs, newObjectBox(lo[g], hi[g]))
	}
	tb.boxes, tb.cents = grow(tb.boxes, n), grow(tb.cents, n)
	tb.keys = grow(tb.keys, n)
	tb.order, tb.words, tb.next, tb.depth = order, words, 1, 0
	kmax := 1.0
	for i := range x.Records {
		r := &x.Records[i]
		b, k := instanceBox(r, &tb.objs[r.Geometry])
		tb.boxes[i] = b
		kmax = max(kmax, k)
		tb.cents[i] = [3]float64{b.lo[0] + b.hi[0], b.lo[1] + b.hi[1], b.lo[2] + b.hi[2]}
		order[i] = int32(i)
	}
	// The root is a child-pair node; a scene of one leaf repeats it in
	// both slots (its instances are tested twice, which changes nothing).
	if n <= TLASLeafSize {
		ref, box := tb.leaf(0, n)
		tb.setNode(0, [2]box64{box, box}, [2]int32{ref, ref})
		tb.depth = 1
	} else {
		tb.split(0, 0, n, 1)
	}
	scale := float32(math.Pow(2, math.Ceil(math.Log2(TLASInflate*kmax))))
	tb.order, tb.words = nil, nil
	return scale, tb.depth
}

// grow returns s with length n, reusing its storage when large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (tb *tlasBuilder) leaf(first, count int) (int32, box64) {
	b := emptyBox64()
	for _, id := range tb.order[first : first+count] {
		b.grow(tb.boxes[id])
	}
	return ^int32(first<<LeafCountBits | (count - 1)), b
}

// split fills node ni with the two halves of order[first:first+count] and
// returns the bounds of the range. Nodes are numbered in preorder (a
// node's first child's subtree before its second child).
func (tb *tlasBuilder) split(ni, first, count, depth int) box64 {
	tb.depth = max(tb.depth, depth)
	part := tb.order[first : first+count]
	clo, chi := tb.cents[part[0]], tb.cents[part[0]]
	for _, id := range part[1:] {
		// Plain comparisons give min and max here: centroids are finite,
		// and a signed zero kept instead of the other leaves every extent
		// below (and so the axis) unchanged.
		c := &tb.cents[id]
		for a := range 3 {
			if c[a] < clo[a] {
				clo[a] = c[a]
			}
			if c[a] > chi[a] {
				chi[a] = c[a]
			}
		}
	}
	axis := 0
	for a := 1; a < 3; a++ {
		if chi[a]-clo[a] > chi[axis]-clo[axis] {
			axis = a
		}
	}
	half := count / 2
	keys := tb.keys[:count]
	for k, id := range part {
		keys[k] = tlasKey{c: tb.cents[id][axis], id: id}
	}
	selectNth(keys, half)
	for k := range keys {
		part[k] = keys[k].id
	}
	var refs [2]int32
	var boxes [2]box64
	for c, span := range [2][2]int{{first, half}, {first + half, count - half}} {
		if span[1] <= TLASLeafSize {
			refs[c], boxes[c] = tb.leaf(span[0], span[1])
			continue
		}
		child := tb.next
		tb.next++
		boxes[c] = tb.split(child, span[0], span[1], depth+1)
		refs[c] = int32(child)
	}
	tb.setNode(ni, boxes, refs)
	all := boxes[0]
	all.grow(boxes[1])
	return all
}

// selectNth rearranges part so that part[:k] holds its k smallest keys and
// part[k:] the others (Hoare quickselect with a median-of-three pivot:
// deterministic, linear on average).
func selectNth(part []tlasKey, k int) {
	lo, hi := 0, len(part)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if keyLess(part[mid], part[lo]) {
			part[lo], part[mid] = part[mid], part[lo]
		}
		if keyLess(part[hi], part[lo]) {
			part[lo], part[hi] = part[hi], part[lo]
		}
		if keyLess(part[hi], part[mid]) {
			part[mid], part[hi] = part[hi], part[mid]
		}
		pivot := part[mid]
		i, j := lo, hi
		for i <= j {
			for keyLess(part[i], pivot) {
				i++
			}
			for keyLess(pivot, part[j]) {
				j--
			}
			if i <= j {
				part[i], part[j] = part[j], part[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// setNode writes node ni: its child boxes, rounded outward to float32, its
// refs and zero padding.
func (tb *tlasBuilder) setNode(ni int, boxes [2]box64, refs [2]int32) {
	w := tb.words[NodeWords*ni : NodeWords*(ni+1)]
	for c := range 2 {
		lo, hi := boxes[c].lo, boxes[c].hi
		w[4*c+0], w[4*c+1] = down32(lo[0]), up32(hi[0])
		w[4*c+2], w[4*c+3] = down32(lo[1]), up32(hi[1])
		w[8+2*c], w[9+2*c] = down32(lo[2]), up32(hi[2])
		w[12+c] = uint32(refs[c])
	}
	w[14], w[15] = 0, 0
}
