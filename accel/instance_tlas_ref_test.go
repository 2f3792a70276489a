package accel

// A plain top-level build, written for clarity: the build must reproduce
// its nodes, order, scale and depth exactly.

import (
	"math"
	"sort"

	"github.com/rayd-go/rayd/geom"
)

// refInstanceBox is the inflated world box of instance record r over the
// object box (lo, hi) of its geometry, and the instance's condition number.
func refInstanceBox(r *geom.InstanceRecord, lo, hi [3]float64) (box64, float64) {
	// The exact box of the mapped box: centre A·c + t, half-extent |A|·e.
	var b box64
	for i := range 3 {
		var c, e, m float64
		for j := range 3 {
			a := float64(r.Transform[4*i+j])
			c += a * (lo[j] + hi[j]) / 2
			e += math.Abs(a) * (hi[j] - lo[j]) / 2
			m += math.Abs(a) * max(math.Abs(lo[j]), math.Abs(hi[j]))
		}
		t := float64(r.Transform[4*i+3])
		c += t
		e += (m + math.Abs(t)) * 0x1p-48 // covers the rounding of the sums above
		b.lo[i], b.hi[i] = c-e, c+e
	}
	var na, ni, tmag, mag float64
	for i := range 3 {
		var ra, ri float64
		for j := range 3 {
			ra += math.Abs(float64(r.Transform[4*i+j]))
			ri += math.Abs(float64(r.Inverse[3*i+j]))
		}
		na, ni = max(na, ra), max(ni, ri)
		tmag = max(tmag, math.Abs(float64(r.Transform[4*i+3])))
		mag = max(mag, math.Abs(b.lo[i]), math.Abs(b.hi[i]))
	}
	kappa := max(na*ni, 1)
	pad := TLASInflate*kappa*(mag+tmag) + 0x1p-126
	for k := range 3 {
		b.lo[k] -= pad
		b.hi[k] += pad
	}
	return b, kappa
}

// refBuildTLAS is the reference of BuildTLAS: instance boxes and
// condition numbers by refInstanceBox; the instances sorted stably (ties
// in id order) by the Morton code of their centroids on the cubic grid of
// 2^mortonBits cells along the longest extent of the centroid bounds;
// then each range split at its middle position, nodes numbered in
// preorder.
func refBuildTLAS(x *geom.Instances, lo, hi [][3]float64) *TLAS {
	n := x.Len()
	tb := &refTLASBuilder{boxes: make([]box64, n), order: make([]int32, n),
		words: make([]uint32, 0, NodeWords*(2*n/TLASLeafSize+2))}
	cents := make([][3]float64, n)
	kmax := 1.0
	clo, chi := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i := range x.Records {
		r := &x.Records[i]
		var k float64
		tb.boxes[i], k = refInstanceBox(r, lo[r.Geometry], hi[r.Geometry])
		kmax = max(kmax, k)
		for a := range 3 {
			cents[i][a] = tb.boxes[i].lo[a] + tb.boxes[i].hi[a]
			clo[a], chi[a] = min(clo[a], cents[i][a]), max(chi[a], cents[i][a])
		}
		tb.order[i] = int32(i)
	}
	ext := max(chi[0]-clo[0], chi[1]-clo[1], chi[2]-clo[2])
	keys := make([]uint32, n)
	for i, c := range cents {
		var q [3]uint32
		for a := range 3 {
			if ext > 0 {
				q[a] = uint32(min(max((c[a]-clo[a])*((1<<mortonBits)/ext), 0), 1<<mortonBits-1))
			}
		}
		for bit := range mortonBits {
			for a := range 3 {
				keys[i] |= (q[a] >> bit & 1) << (3*bit + a)
			}
		}
	}
	sort.SliceStable(tb.order, func(i, j int) bool { return keys[tb.order[i]] < keys[tb.order[j]] })
	// The root is a child-pair node; a scene of one leaf repeats it in
	// both slots (its instances are tested twice, which changes nothing).
	tb.alloc()
	if n <= TLASLeafSize {
		ref, box := tb.leaf(0, n)
		tb.setNode(0, [2]box64{box, box}, [2]int32{ref, ref})
		tb.depth = 1
	} else {
		tb.split(0, 0, n, 1)
	}
	scale := float32(math.Pow(2, math.Ceil(math.Log2(TLASInflate*kmax))))
	return &TLAS{Nodes: tb.words, Order: tb.order, Scale: scale, Depth: tb.depth}
}

type refTLASBuilder struct {
	boxes []box64
	order []int32
	words []uint32
	depth int
}

// alloc appends an empty node and returns its index.
func (tb *refTLASBuilder) alloc() int {
	tb.words = append(tb.words, make([]uint32, NodeWords)...)
	return len(tb.words)/NodeWords - 1
}

func (tb *refTLASBuilder) leaf(first, count int) (int32, box64) {
	b := emptyBox64()
	for _, id := range tb.order[first : first+count] {
		b.grow(tb.boxes[id])
	}
	return ^int32(first<<LeafCountBits | (count - 1)), b
}

// split fills node ni with the two halves of order[first:first+count] and
// returns the bounds of the range.
func (tb *refTLASBuilder) split(ni, first, count, depth int) box64 {
	tb.depth = max(tb.depth, depth)
	half := count / 2
	var refs [2]int32
	var boxes [2]box64
	for c, span := range [2][2]int{{first, half}, {first + half, count - half}} {
		if span[1] <= TLASLeafSize {
			refs[c], boxes[c] = tb.leaf(span[0], span[1])
			continue
		}
		child := tb.alloc()
		boxes[c] = tb.split(child, span[0], span[1], depth+1)
		refs[c] = int32(child)
	}
	tb.setNode(ni, boxes, refs)
	all := boxes[0]
	all.grow(boxes[1])
	return all
}

// setNode writes node ni's child boxes, rounded outward to float32, and refs.
func (tb *refTLASBuilder) setNode(ni int, boxes [2]box64, refs [2]int32) {
	w := tb.words[NodeWords*ni : NodeWords*(ni+1)]
	for c := range 2 {
		lo, hi := boxes[c].lo, boxes[c].hi
		w[4*c+0], w[4*c+1] = down32(lo[0]), up32(hi[0])
		w[4*c+2], w[4*c+3] = down32(lo[1]), up32(hi[1])
		w[8+2*c], w[9+2*c] = down32(lo[2]), up32(hi[2])
		w[12+c] = uint32(refs[c])
	}
}
