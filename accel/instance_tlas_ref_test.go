package accel

// The first top-level build (a record of the tree the kernels were
// validated with): the current build must reproduce its nodes, order,
// scale and depth exactly.

import (
	"math"

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

// refBuildTLAS is the first top-level build, kept to check that the
// current one produces the same tree bit for bit. It builds the top level over the instances of x, whose geometries
// have the object boxes (lo, hi) (ObjectBounds). Median splits on the
// longest centroid axis keep the tree balanced: its depth is about
// log2(instances/TLASLeafSize)+1, far below the kernels' stack of 64. The
// build is deterministic (ties in the split order go to the lower id) and
// takes well under a millisecond for thousands of instances, so transform
// updates rebuild it rather than refit it.
func refBuildTLAS(x *geom.Instances, lo, hi [][3]float64) *TLAS {
	n := x.Len()
	tb := &refTLASBuilder{boxes: make([]box64, n), cents: make([][3]float64, n), order: make([]int32, n),
		words: make([]uint32, 0, NodeWords*(2*n/TLASLeafSize+2))}
	kmax := 1.0
	for i := range x.Records {
		r := &x.Records[i]
		var k float64
		tb.boxes[i], k = refInstanceBox(r, lo[r.Geometry], hi[r.Geometry])
		kmax = max(kmax, k)
		for a := range 3 {
			tb.cents[i][a] = tb.boxes[i].lo[a] + tb.boxes[i].hi[a]
		}
		tb.order[i] = int32(i)
	}
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
	cents [][3]float64 // twice the box centres
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
	part := tb.order[first : first+count]
	clo, chi := tb.cents[part[0]], tb.cents[part[0]]
	for _, id := range part[1:] {
		for a := range 3 {
			clo[a], chi[a] = min(clo[a], tb.cents[id][a]), max(chi[a], tb.cents[id][a])
		}
	}
	axis := 0
	for a := 1; a < 3; a++ {
		if chi[a]-clo[a] > chi[axis]-clo[axis] {
			axis = a
		}
	}
	half := count / 2
	tb.selectNth(part, half, axis)
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

// less orders instances by centroid along axis, ties to the lower id.
func (tb *refTLASBuilder) less(a, b int32, axis int) bool {
	ca, cb := tb.cents[a][axis], tb.cents[b][axis]
	return ca < cb || (ca == cb && a < b)
}

// selectNth rearranges part so that part[:k] holds its k smallest entries
// under less and part[k:] the others (Hoare quickselect with a
// median-of-three pivot: deterministic, linear on average).
func (tb *refTLASBuilder) selectNth(part []int32, k, axis int) {
	lo, hi := 0, len(part)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if tb.less(part[mid], part[lo], axis) {
			part[lo], part[mid] = part[mid], part[lo]
		}
		if tb.less(part[hi], part[lo], axis) {
			part[lo], part[hi] = part[hi], part[lo]
		}
		if tb.less(part[hi], part[mid], axis) {
			part[mid], part[hi] = part[hi], part[mid]
		}
		pivot := part[mid]
		i, j := lo, hi
		for i <= j {
			for tb.less(part[i], pivot, axis) {
				i++
			}
			for tb.less(pivot, part[j], axis) {
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
