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

// objectBox is a geometry's object box in the terms instanceBox reads:
// per axis lo+hi, hi−lo and max(|lo|, |hi|).
type objectBox struct {
	sum, diff, amax [3]float64
}

func newObjectBox(lo, hi [3]float64) objectBox {
	var o objectBox
	for j := range 3 {
		o.sum[j], o.diff[j] = lo[j]+hi[j], hi[j]-lo[j]
		o.amax[j] = max(math.Abs(lo[j]), math.Abs(hi[j]))
	}
	return o
}

// instanceBox is the inflated world box of instance record r over the
// object box o of its geometry, and the instance's condition number.
func instanceBox(r *geom.InstanceRecord, o *objectBox) (box64, float64) {
	// The exact box of the mapped box: centre A·c + t, half-extent |A|·e.
	var b box64
	var na, ni, tmag, mag float64
	for i := range 3 {
		var c, e, m, ra, ri float64
		for j := range 3 {
			a := float64(r.Transform[4*i+j])
			abs := math.Abs(a)
			c += a * o.sum[j] / 2
			e += abs * o.diff[j] / 2
			m += abs * o.amax[j]
			ra += abs
			ri += math.Abs(float64(r.Inverse[3*i+j]))
		}
		t := float64(r.Transform[4*i+3])
		c += t
		e += (m + math.Abs(t)) * 0x1p-48 // covers the rounding of the sums above
		b.lo[i], b.hi[i] = c-e, c+e
		na, ni = max(na, ra), max(ni, ri)
		tmag = max(tmag, math.Abs(t))
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
// the tree's shape depends on the instance count alone (TLASNodeCount
// nodes). Transform updates rebuild it rather than refit it: a refit keeps
// the old placement's tree. (A Morton-order build with middle-position
// splits took 0.30 ms instead of 0.49 ms for the benchmark's 1,024
// instances on an H200 host, but its tree made the instanced intersect
// 17.4 ms instead of 11.2 ms.)
func BuildTLAS(x *geom.Instances, lo, hi [][3]float64) *TLAS {
	n := x.Len()
	tl := &TLAS{Nodes: make([]uint32, NodeWords*TLASNodeCount(n)), Order: make([]int32, n)}
	tl.Scale, tl.Depth = newTLASBuilder().build(x, lo, hi, tl.Nodes, tl.Order)
	return tl
}

// TLASNodeCount is the number of nodes of the top level over n ≥ 1
// instances (BuildTLAS's Nodes hold NodeWords words per node).
func TLASNodeCount(n int) int {
	if n <= TLASLeafSize {
		return 1
	}
	if TLASLeafSize == 1 { // a binary tree over n single-instance leaves
		return n - 1
	}
	// Median splits: a range of c > TLASLeafSize instances is one node
	// over ranges of c/2 and c−c/2, so the ranges of one level all have
	// size lo or lo+1: count them level by level.
	nodes, lo, nLo, nHi := 0, n, 1, 0 // nLo ranges of size lo, nHi of lo+1
	for {
		var cnt [2]int // next level: ranges of size h, h+1
		h := lo / 2
		for _, r := range [2][2]int{{lo, nLo}, {lo + 1, nHi}} {
			if r[0] <= TLASLeafSize || r[1] == 0 {
				continue
			}
			nodes += r[1]
			cnt[r[0]/2-h] += r[1]
			cnt[r[0]-r[0]/2-h] += r[1]
		}
		if cnt == [2]int{} {
			return nodes
		}
		lo, nLo, nHi = h, cnt[0], cnt[1]
	}
}

// down32 and up32 round a float64 toward −∞ / +∞ to float32 bits
// (math.Nextafter32 of the nearest float32 when it lies on the wrong side,
// on the bit pattern: the direction of rounding is data-dependent, so the
// step is selected without a branch).
func down32(x float64) uint32 {
	f := float32(x)
	b := math.Float32bits(f)
	var step uint32
	if float64(f) > x {
		step = 1
	}
	if b == 0 && step == 1 { // +0 above x: the smallest negative subnormal
		return 0x80000001
	}
	// A positive f (or +Inf) steps down in magnitude, a negative one up.
	return b - step + (step<<1)&(b>>30&2)
}

func up32(x float64) uint32 {
	f := float32(x)
	b := math.Float32bits(f)
	var step uint32
	if float64(f) < x {
		step = 1
	}
	if b == 0x80000000 && step == 1 { // −0 below x: the smallest positive subnormal
		return 1
	}
	// A negative f (or −Inf) steps down in magnitude, a positive one up.
	return b + step - (step<<1)&(b>>30&2)
}
