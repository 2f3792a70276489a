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

// mortonBits is the number of bits per axis of the top level's Morton
// codes: the cells are cubes, 2^mortonBits of them along the longest
// extent of the instance centroids.
const mortonBits = 10

// tlasBuilder builds top levels (BuildTLAS's tree) into caller-provided
// nodes and order. Its scratch is kept between builds, so a builder reused
// for every update of one instance set allocates nothing after the first
// but its goroutines.
type tlasBuilder struct {
	objs  []objectBox
	boxes []box32      // each instance's box, rounded outward to float32, by id
	cent  [][3]float64 // each instance's centroid (twice its box centre), by id
	kmax  []float64    // largest condition number per chunk of boxes
	clo   [][3]float64 // centroid bounds per chunk of boxes
	chi   [][3]float64
	keys  []uint32 // Morton code by id
	order []int32  // the instances in Morton order (leaf order)
	tmp   []int32
	count []int32
	words []uint32
	// serial builds on the calling goroutine alone.
	serial bool
}

// newTLASBuilder returns a builder that goes parallel when the process may
// run tlasParallelProcs goroutines at once.
func newTLASBuilder() *tlasBuilder {
	return &tlasBuilder{serial: runtime.GOMAXPROCS(0) < tlasParallelProcs}
}

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
	tb.boxes, tb.cent = grow(tb.boxes, n), grow(tb.cent, n)
	tb.kmax, tb.clo, tb.chi = grow(tb.kmax, chunks), grow(tb.clo, chunks), grow(tb.chi, chunks)
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
	clo, chi := tb.clo[0], tb.chi[0]
	for c, k := range tb.kmax {
		kmax = max(kmax, k)
		for a := range 3 {
			clo[a], chi[a] = min(clo[a], tb.clo[c][a]), max(chi[a], tb.chi[c][a])
		}
	}
	tb.sortMorton(clo, chi)
	// The root is a child-pair node; a scene of one leaf repeats it in
	// both slots (its instances are tested twice, which changes nothing).
	depth := 1
	if n <= TLASLeafSize {
		ref, box := tb.leaf(0, n)
		tb.setNode(0, [2]box32{box, box}, [2]int32{ref, ref})
	} else {
		_, depth = tb.split(0, 0, n, 1)
	}
	copy(order, tb.order)
	scale := float32(math.Pow(2, math.Ceil(math.Log2(TLASInflate*kmax))))
	tb.words = nil
	return scale, depth
}

// instanceBoxes computes the boxes and centroids of instances [first,
// last), chunk c, and the chunk's largest condition number and centroid
// bounds.
func (tb *tlasBuilder) instanceBoxes(x *geom.Instances, c, first, last int) {
	kmax := 1.0
	inf := math.Inf(1)
	clo, chi := [3]float64{inf, inf, inf}, [3]float64{-inf, -inf, -inf}
	for i := first; i < last; i++ {
		r := &x.Records[i]
		b, k := instanceBox(r, &tb.objs[r.Geometry])
		tb.boxes[i] = outward32(b)
		kmax = max(kmax, k)
		cent := [3]float64{b.lo[0] + b.hi[0], b.lo[1] + b.hi[1], b.lo[2] + b.hi[2]}
		tb.cent[i] = cent
		for a := range 3 {
			clo[a], chi[a] = min(clo[a], cent[a]), max(chi[a], cent[a])
		}
	}
	tb.kmax[c], tb.clo[c], tb.chi[c] = kmax, clo, chi
}

// sortMorton orders the instances by the Morton code of their centroids in
// the cubic grid over the centroid bounds [clo, chi], ties in id order (a
// stable least-significant-digit radix sort of mortonBits-bit digits).
func (tb *tlasBuilder) sortMorton(clo, chi [3]float64) {
	n := len(tb.cent)
	ext := max(chi[0]-clo[0], chi[1]-clo[1], chi[2]-clo[2])
	inv := 0.0
	if ext > 0 {
		inv = (1 << mortonBits) / ext
	}
	tb.keys, tb.order, tb.tmp = grow(tb.keys, n), grow(tb.order, n), grow(tb.tmp, n)
	tb.count = grow(tb.count, 1<<mortonBits)
	for i, c := range tb.cent {
		tb.keys[i] = expandBits(cell(c[0], clo[0], inv)) | expandBits(cell(c[1], clo[1], inv))<<1 | expandBits(cell(c[2], clo[2], inv))<<2
		tb.order[i] = int32(i)
	}
	src, dst := tb.order, tb.tmp
	for shift := 0; shift < 3*mortonBits; shift += mortonBits {
		clear(tb.count)
		for _, id := range src {
			tb.count[tb.keys[id]>>shift&(1<<mortonBits-1)]++
		}
		sum := int32(0)
		for d, c := range tb.count {
			tb.count[d], sum = sum, sum+c
		}
		for _, id := range src {
			d := tb.keys[id] >> shift & (1<<mortonBits - 1)
			dst[tb.count[d]] = id
			tb.count[d]++
		}
		src, dst = dst, src
	}
	tb.order, tb.tmp = src, dst
}

// cell is the grid cell of coordinate x on an axis starting at lo with
// inv cells per unit, clamped to the grid.
func cell(x, lo, inv float64) uint32 {
	return uint32(min(max((x-lo)*inv, 0), 1<<mortonBits-1))
}

// grow returns s with length n, reusing its storage when large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (tb *tlasBuilder) leaf(first, count int) (int32, box32) {
	ref := ^int32(first<<LeafCountBits | (count - 1))
	b := tb.boxes[tb.order[first]]
	for k := first + 1; k < first+count; k++ {
		b.grow(&tb.boxes[tb.order[k]])
	}
	return ref, b
}

// split fills node ni with the two halves of order[first:first+count]
// (the first count/2 instances in Morton order, and the others) and
// returns the bounds of the range and the depth of its subtree's deepest
// node. Nodes are numbered in preorder (a node's first child's subtree
// before its second child), so a node's second child is numbered after
// the TLASNodeCount nodes of its first.
func (tb *tlasBuilder) split(ni, first, count, depth int) (box32, int) {
	half := count / 2
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
