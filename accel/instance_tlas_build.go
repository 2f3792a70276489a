package accel

import (
	"math"
	"runtime"
	"sync"

	"github.com/rayd-go/rayd/geom"
)

// Parallel top-level build: ranges of at least tlasParallelRange instances
// build their first half on another goroutine, and the instance boxes are
// computed in chunks of tlasBoxChunk. Every goroutine writes its own
// instances and nodes (node numbers follow from the shape, which depends
// on the instance count alone), so the tree is the same whatever the
// scheduling. It pays off from tlasParallelProcs processors on.
const (
	tlasParallelRange = 256
	tlasBoxChunk      = 256
	tlasParallelProcs = 4
)

// tlasBuilder builds top levels (BuildTLAS's tree) into caller-provided
// nodes and order. Its scratch is kept between builds, so a builder reused
// for every update of one instance set allocates nothing after the first
// but its goroutines.
type tlasBuilder struct {
	objs  []objectBox
	boxes []box32    // each instance's box, rounded outward to float32, by id
	items []tlasItem // the instances in the order being built
	kmax  []float64  // largest condition number per chunk of boxes
	words []uint32
	// serial builds on the calling goroutine alone.
	serial bool
}

// newTLASBuilder returns a builder that goes parallel when the process may
// run tlasParallelProcs goroutines at once.
func newTLASBuilder() *tlasBuilder {
	return &tlasBuilder{serial: runtime.GOMAXPROCS(0) < tlasParallelProcs}
}

// tlasItem is an instance's centroid (twice its box centre) and id. Split
// ranges are selected in place, so every level reads its range's
// centroids contiguously.
type tlasItem struct {
	key float64 // c on the axis being split
	c   [3]float64
	id  int32
}

// itemLess orders items by key, ties to the lower id.
func itemLess(a, b *tlasItem) bool { return a.key < b.key || (a.key == b.key && a.id < b.id) }

// build writes the top level over x into words (NodeWords·TLASNodeCount(n)
// words, every word written) and order (n entries) and returns the world
// slab test's scale and the tree's depth.
func (tb *tlasBuilder) build(x *geom.Instances, lo, hi [][3]float64, words []uint32, order []int32) (float32, int) {
	n := x.Len()
	tb.objs = tb.objs[:0]
	for g := range lo {
		tb.objs = append(tb.objs, newObjectBox(lo[g], hi[g]))
	}
	chunks := (n + tlasBoxChunk - 1) / tlasBoxChunk
	tb.boxes, tb.items, tb.kmax = grow(tb.boxes, n), grow(tb.items, n), grow(tb.kmax, chunks)
	tb.words = words
	var wg sync.WaitGroup
	for c := range chunks {
		first, last := c*tlasBoxChunk, min((c+1)*tlasBoxChunk, n)
		if tb.serial || c == chunks-1 {
			tb.instanceBoxes(x, c, first, last)
			continue
		}
		wg.Go(func() { tb.instanceBoxes(x, c, first, last) })
	}
	wg.Wait()
	kmax := 1.0
	for _, k := range tb.kmax {
		kmax = max(kmax, k)
	}
	// The root is a child-pair node; a scene of one leaf repeats it in
	// both slots (its instances are tested twice, which changes nothing).
	depth := 1
	if n <= TLASLeafSize {
		ref, box := tb.leaf(0, n)
		tb.setNode(0, [2]box32{box, box}, [2]int32{ref, ref})
	} else {
		_, depth = tb.split(0, 0, n, 1)
	}
	for i := range tb.items {
		order[i] = tb.items[i].id
	}
	scale := slabScale(kmax)
	tb.words = nil
	return scale, depth
}

// instanceBoxes computes the boxes and centroids of instances [first,
// last), chunk c, and the chunk's largest condition number.
func (tb *tlasBuilder) instanceBoxes(x *geom.Instances, c, first, last int) {
	kmax := 1.0
	for i := first; i < last; i++ {
		r := &x.Records[i]
		b, k := instanceBox(r, &tb.objs[r.Geometry])
		tb.boxes[i] = outward32(b)
		kmax = max(kmax, k)
		tb.items[i] = tlasItem{c: [3]float64{b.lo[0] + b.hi[0], b.lo[1] + b.hi[1], b.lo[2] + b.hi[2]}, id: int32(i)}
	}
	tb.kmax[c] = kmax
}

// grow returns s with length n, reusing its storage when large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (tb *tlasBuilder) leaf(first, count int) (int32, box32) {
	b := tb.boxes[tb.items[first].id]
	for k := first + 1; k < first+count; k++ {
		b.grow(&tb.boxes[tb.items[k].id])
	}
	return ^int32(first<<LeafCountBits | (count - 1)), b
}

// split fills node ni with the two halves of items[first:first+count] and
// returns the bounds of the range and the depth of its subtree's deepest
// node. Nodes are numbered in preorder (a node's first child's subtree
// before its second child), so a node's second child is numbered after
// the TLASNodeCount nodes of its first.
func (tb *tlasBuilder) split(ni, first, count, depth int) (box32, int) {
	part := tb.items[first : first+count]
	clo, chi := part[0].c, part[0].c
	for k := 1; k < len(part); k++ {
		// Plain comparisons give min and max here: centroids are finite,
		// and a signed zero kept instead of the other leaves every extent
		// below (and so the axis) unchanged.
		c := &part[k].c
		if c[0] < clo[0] {
			clo[0] = c[0]
		}
		if c[0] > chi[0] {
			chi[0] = c[0]
		}
		if c[1] < clo[1] {
			clo[1] = c[1]
		}
		if c[1] > chi[1] {
			chi[1] = c[1]
		}
		if c[2] < clo[2] {
			clo[2] = c[2]
		}
		if c[2] > chi[2] {
			chi[2] = c[2]
		}
	}
	axis := 0
	for a := 1; a < 3; a++ {
		if chi[a]-clo[a] > chi[axis]-clo[axis] {
			axis = a
		}
	}
	half := count / 2
	for k := range part {
		part[k].key = part[k].c[axis]
	}
	selectNth(part, half)

	spans := [2][2]int{{first, half}, {first + half, count - half}}
	var refs [2]int32
	var boxes [2]box32
	depths := [2]int{depth, depth}
	child := ni + 1
	for c, span := range spans {
		if span[1] <= TLASLeafSize {
			refs[c], boxes[c] = tb.leaf(span[0], span[1])
			continue
		}
		refs[c] = int32(child)
		if c == 0 {
			child += TLASNodeCount(span[1])
		}
	}
	if !tb.serial && count >= tlasParallelRange && refs[0] >= 0 && refs[1] >= 0 {
		boxes, depths = tb.splitBoth(refs, spans, depth+1)
	} else {
		for c, span := range spans {
			if refs[c] >= 0 {
				boxes[c], depths[c] = tb.split(int(refs[c]), span[0], span[1], depth+1)
			}
		}
	}
	tb.setNode(ni, boxes, refs)
	all := boxes[0]
	all.grow(&boxes[1])
	return all, max(depths[0], depths[1])
}

// splitBoth splits the two children of a node, nodes refs over spans, the
// first on another goroutine.
func (tb *tlasBuilder) splitBoth(refs [2]int32, spans [2][2]int, depth int) (boxes [2]box32, depths [2]int) {
	var wg sync.WaitGroup
	wg.Go(func() { boxes[0], depths[0] = tb.split(int(refs[0]), spans[0][0], spans[0][1], depth) })
	boxes[1], depths[1] = tb.split(int(refs[1]), spans[1][0], spans[1][1], depth)
	wg.Wait()
	return boxes, depths
}

// selectNth rearranges part so that part[:k] holds its k smallest items
// under itemLess (the centroid coordinate on the split axis, ties to the
// lower id) and part[k:] the others (Hoare quickselect with a
// median-of-three pivot: deterministic, linear on average).
func selectNth(part []tlasItem, k int) {
	lo, hi := 0, len(part)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if itemLess(&part[mid], &part[lo]) {
			part[lo], part[mid] = part[mid], part[lo]
		}
		if itemLess(&part[hi], &part[lo]) {
			part[lo], part[hi] = part[hi], part[lo]
		}
		if itemLess(&part[hi], &part[mid]) {
			part[mid], part[hi] = part[hi], part[mid]
		}
		pivot := part[mid]
		i, j := lo, hi
		for i <= j {
			for itemLess(&part[i], &pivot) {
				i++
			}
			for itemLess(&pivot, &part[j]) {
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

// box32 is a box rounded outward to float32. Rounding toward −∞ (+∞) is
// monotone, so the rounded union of float64 boxes is the union of their
// rounded boxes: instance boxes are rounded once and node boxes are unions
// in float32 (min and max order −0 below +0, as the float64 union does).
type box32 struct{ lo, hi [3]float32 }

func outward32(b box64) box32 {
	var o box32
	for a := range 3 {
		o.lo[a] = math.Float32frombits(down32(b.lo[a]))
		o.hi[a] = math.Float32frombits(up32(b.hi[a]))
	}
	return o
}

func (b *box32) grow(o *box32) {
	for a := range 3 {
		b.lo[a] = min(b.lo[a], o.lo[a])
		b.hi[a] = max(b.hi[a], o.hi[a])
	}
}

// setNode writes node ni: its child boxes (float32 bits), its refs and zero
// padding.
func (tb *tlasBuilder) setNode(ni int, boxes [2]box32, refs [2]int32) {
	w := tb.words[NodeWords*ni : NodeWords*(ni+1)]
	for c := range 2 {
		lo, hi := &boxes[c].lo, &boxes[c].hi
		w[4*c+0], w[4*c+1] = math.Float32bits(lo[0]), math.Float32bits(hi[0])
		w[4*c+2], w[4*c+3] = math.Float32bits(lo[1]), math.Float32bits(hi[1])
		w[8+2*c], w[9+2*c] = math.Float32bits(lo[2]), math.Float32bits(hi[2])
		w[12+c] = uint32(refs[c])
	}
	w[14], w[15] = 0, 0
}
