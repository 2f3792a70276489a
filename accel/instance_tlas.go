package accel

import (
	"math"

	"github.com/rayd-go/rayd/geom"
)

// Top-level (instance) BVH constants. The instance kernels test the world
// ray against boxes that cover every world point an accepted object-space
// hit can stand for: the float32 object ray of geom.ObjectRay differs from
// the exact inverse image of the world ray by a few units in the last
// place of |o| + |b| (b the translation) magnified by the condition number
// κ = ‖A‖∞·‖A⁻¹‖∞ of the linear part, and so do the hit points. Stored
// boxes are inflated by TLASInflate·κ·(largest |coordinate| of the world
// box + largest |b|) and the ray's origin term is TLASInflate·max κ·|o|
// (rounded up to a power of two): 512 float32 ulps per unit of κ, far
// above the few ulps the error analysis needs.
const (
	// TLASInflate is the relative inflation unit of the top level (2^-15).
	TLASInflate = 1.0 / (1 << 15)
	// TLASLeafSize is the largest number of instances in a top-level leaf:
	// one, so that the walk tests every instance's own box before forming
	// its object-space ray. Measured on an H200 (1,024 instances of the
	// light grid, 4,194,304 incoherent rays, persistent launch): 12.1 ms
	// with leaves of one instance, 15.0 ms with two, 18.6 ms with four.
	TLASLeafSize = 1
)

// TLAS is a top-level BVH in the child-pair node layout of Layout (Width
// 2): leaf references index Order, which lists instance ids in leaf order.
// Scale is the origin term of the world slab test.
type TLAS struct {
	Nodes []uint32
	Order []int32
	Scale float32
	Depth int
}

// ObjectBounds returns the bounding box of each mesh's vertices in t.
func ObjectBounds(t *geom.Tables) (lo, hi [][3]float64) {
	lo, hi = make([][3]float64, t.NumMeshes()), make([][3]float64, t.NumMeshes())
	for m := range t.NumMeshes() {
		b := emptyBox64()
		vo := int(t.VertexOffset[m])
		for v := vo; v < vo+t.MeshVertexCount(m); v++ {
			for k := range 3 {
				x := float64(t.Vertices[3*v+k])
				b.lo[k], b.hi[k] = min(b.lo[k], x), max(b.hi[k], x)
			}
		}
		lo[m], hi[m] = b.lo, b.hi
	}
	return lo, hi
}

// instanceBox is the inflated world box of instance record r over the
// object box (lo, hi) of its geometry, and the instance's condition number.
func instanceBox(r *geom.InstanceRecord, lo, hi [3]float64) (box64, float64) {
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

// BuildTLAS builds the top level over the instances of x, whose geometries
// have the object boxes (lo, hi) (ObjectBounds). Median splits on the
// longest centroid axis keep the tree balanced: its depth is about
// log2(instances/TLASLeafSize)+1, far below the kernels' stack of 64. The
// build is deterministic (ties in the split order go to the lower id) and
// takes well under a millisecond for thousands of instances, so transform
// updates rebuild it rather than refit it.
func BuildTLAS(x *geom.Instances, lo, hi [][3]float64) *TLAS {
	n := x.Len()
	tb := &tlasBuilder{boxes: make([]box64, n), cents: make([][3]float64, n), order: make([]int32, n),
		words: make([]uint32, 0, NodeWords*(2*n/TLASLeafSize+2))}
	kmax := 1.0
	for i := range x.Records {
		r := &x.Records[i]
		var k float64
		tb.boxes[i], k = instanceBox(r, lo[r.Geometry], hi[r.Geometry])
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

type tlasBuilder struct {
	boxes []box64
	cents [][3]float64 // twice the box centres
	order []int32
	words []uint32
	depth int
}

// alloc appends an empty node and returns its index.
func (tb *tlasBuilder) alloc() int {
	tb.words = append(tb.words, make([]uint32, NodeWords)...)
	return len(tb.words)/NodeWords - 1
}

func (tb *tlasBuilder) leaf(first, count int) (int32, box64) {
	b := emptyBox64()
	for _, id := range tb.order[first : first+count] {
		b.grow(tb.boxes[id])
	}
	return ^int32(first<<LeafCountBits | (count - 1)), b
}

// split fills node ni with the two halves of order[first:first+count] and
// returns the bounds of the range.
func (tb *tlasBuilder) split(ni, first, count, depth int) box64 {
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
func (tb *tlasBuilder) less(a, b int32, axis int) bool {
	ca, cb := tb.cents[a][axis], tb.cents[b][axis]
	return ca < cb || (ca == cb && a < b)
}

// selectNth rearranges part so that part[:k] holds its k smallest entries
// under less and part[k:] the others (Hoare quickselect with a
// median-of-three pivot: deterministic, linear on average).
func (tb *tlasBuilder) selectNth(part []int32, k, axis int) {
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
func (tb *tlasBuilder) setNode(ni int, boxes [2]box64, refs [2]int32) {
	w := tb.words[NodeWords*ni : NodeWords*(ni+1)]
	for c := range 2 {
		lo, hi := boxes[c].lo, boxes[c].hi
		w[4*c+0], w[4*c+1] = down32(lo[0]), up32(hi[0])
		w[4*c+2], w[4*c+3] = down32(lo[1]), up32(hi[1])
		w[8+2*c], w[9+2*c] = down32(lo[2]), up32(hi[2])
		w[12+c] = uint32(refs[c])
	}
}

// down32 and up32 round a float64 toward −∞ / +∞ to float32 bits.
func down32(x float64) uint32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return math.Float32bits(f)
}

func up32(x float64) uint32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return math.Float32bits(f)
}
