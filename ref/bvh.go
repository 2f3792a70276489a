package ref

import (
	"context"
	"math"

	"github.com/rayd-go/rayd/geom"
)

const (
	// maxLeaf is the largest number of triangles in a leaf.
	maxLeaf = 4
	// sahBins is the number of centroid bins per axis of the SAH sweep.
	sahBins = 16
	// padRel and padAbs inflate every box during traversal by
	// padRel·(largest |coordinate| of the box + largest |origin coordinate|)
	// + padAbs. The watertight test decides on float32 coordinates relative
	// to the origin, so an accepted hit point lies within a few float32 ulps
	// of those magnitudes of its triangle; the pad is about 160 ulps, which
	// keeps culling conservative: no box that holds an acceptable hit is
	// skipped, so the BVH answers exactly like brute force.
	padRel = 1e-5
	padAbs = 1e-30
	// tSlack widens the [tmin, best t] interval of the box test relatively.
	tSlack = 1e-9
)

// aabb is an axis-aligned box in float64 (float32 corners are exact).
type aabb struct {
	lo, hi [3]float64
}

func emptyBox() aabb {
	inf := math.Inf(1)
	return aabb{lo: [3]float64{inf, inf, inf}, hi: [3]float64{-inf, -inf, -inf}}
}

func (b *aabb) growPoint(p [3]float64) {
	for k := range 3 {
		b.lo[k] = min(b.lo[k], p[k])
		b.hi[k] = max(b.hi[k], p[k])
	}
}

func (b *aabb) grow(o aabb) {
	for k := range 3 {
		b.lo[k] = min(b.lo[k], o.lo[k])
		b.hi[k] = max(b.hi[k], o.hi[k])
	}
}

func (b *aabb) area() float64 {
	x, y, z := b.hi[0]-b.lo[0], b.hi[1]-b.lo[1], b.hi[2]-b.lo[2]
	return x*y + y*z + z*x
}

// magnitude is the largest |coordinate| of the box.
func (b *aabb) magnitude() float64 {
	m := 0.0
	for k := range 3 {
		m = max(m, math.Abs(b.lo[k]), math.Abs(b.hi[k]))
	}
	return m
}

func triBox(tr *triangle) aabb {
	b := emptyBox()
	for _, p := range tr {
		b.growPoint([3]float64{float64(p[0]), float64(p[1]), float64(p[2])})
	}
	return b
}

// bvhNode is one node of a pre-order tree: the left child of an internal
// node follows it, right holds the index of its right child; a leaf has
// right = -1 and covers prims[start : start+count].
type bvhNode struct {
	box          aabb
	mag          float64
	right        int32
	start, count int32
}

type bvh struct {
	nodes []bvhNode
	prims []int32
}

// buildCheckPrims is the subtree size from which the build checks its
// context before splitting: a subtree that small builds in well under a
// millisecond.
const buildCheckPrims = 1024

// buildBVH builds the tree over tris, checking ctx before every split of a
// large subtree; once ctx is done it stops and returns ctx.Err().
func buildBVH(ctx context.Context, tris []triangle) (*bvh, error) {
	n := len(tris)
	b := &bvh{prims: make([]int32, n), nodes: make([]bvhNode, 0, 2*(n/2+1))}
	boxes := make([]aabb, n)
	cents := make([][3]float64, n)
	for i := range tris {
		b.prims[i] = int32(i)
		boxes[i] = triBox(&tris[i])
		for k := range 3 {
			cents[i][k] = (boxes[i].lo[k] + boxes[i].hi[k]) / 2
		}
	}
	bd := builder{bvh: b, ctx: ctx, boxes: boxes, cents: cents}
	bd.build(0, n)
	if bd.err != nil {
		return nil, bd.err
	}
	return b, nil
}

// builder carries the state of one build.
type builder struct {
	*bvh
	ctx   context.Context
	err   error
	boxes []aabb
	cents [][3]float64
}

// build creates the subtree over prims[lo:hi] and returns its root index;
// after a cancellation it records the error and builds nothing more.
func (bd *builder) build(lo, hi int) int32 {
	if bd.err != nil {
		return -1
	}
	if hi-lo >= buildCheckPrims {
		if bd.err = bd.ctx.Err(); bd.err != nil {
			return -1
		}
	}
	b, boxes, cents := bd.bvh, bd.boxes, bd.cents
	idx := int32(len(b.nodes))
	box, cb := emptyBox(), emptyBox()
	for _, p := range b.prims[lo:hi] {
		box.grow(boxes[p])
		cb.growPoint(cents[p])
	}
	b.nodes = append(b.nodes, bvhNode{box: box, mag: box.magnitude(), right: -1,
		start: int32(lo), count: int32(hi - lo)})
	if hi-lo <= maxLeaf {
		return idx
	}
	mid := b.split(lo, hi, cb, boxes, cents)
	bd.build(lo, mid)
	right := bd.build(mid, hi)
	b.nodes[idx].right = right
	b.nodes[idx].start, b.nodes[idx].count = 0, 0
	return idx
}

// binOf is the SAH bin of centroid c along axis.
func binOf(c [3]float64, axis int, cb *aabb, scale float64) int {
	k := int((c[axis] - cb.lo[axis]) * scale)
	return min(max(k, 0), sahBins-1)
}

// split partitions prims[lo:hi] at the binned-SAH plane of least cost and
// returns the first index of the right part. When every centroid coincides
// it splits the range in half.
func (b *bvh) split(lo, hi int, cb aabb, boxes []aabb, cents [][3]float64) int {
	bestCost, bestAxis, bestBin := math.Inf(1), -1, 0
	for axis := range 3 {
		ext := cb.hi[axis] - cb.lo[axis]
		if !(ext > 0) {
			continue
		}
		scale := sahBins / ext
		var bins [sahBins]struct {
			box aabb
			n   int
		}
		for k := range bins {
			bins[k].box = emptyBox()
		}
		for _, p := range b.prims[lo:hi] {
			k := binOf(cents[p], axis, &cb, scale)
			bins[k].box.grow(boxes[p])
			bins[k].n++
		}
		var rightArea [sahBins]float64
		var rightCount [sahBins]int
		acc, cnt := emptyBox(), 0
		for k := sahBins - 1; k > 0; k-- {
			acc.grow(bins[k].box)
			cnt += bins[k].n
			rightArea[k], rightCount[k] = acc.area(), cnt
		}
		acc, cnt = emptyBox(), 0
		for k := range sahBins - 1 {
			acc.grow(bins[k].box)
			cnt += bins[k].n
			if cnt == 0 || rightCount[k+1] == 0 {
				continue
			}
			if cost := acc.area()*float64(cnt) + rightArea[k+1]*float64(rightCount[k+1]); cost < bestCost {
				bestCost, bestAxis, bestBin = cost, axis, k
			}
		}
	}
	if bestAxis < 0 {
		return (lo + hi) / 2
	}
	scale := sahBins / (cb.hi[bestAxis] - cb.lo[bestAxis])
	i, j := lo, hi-1
	for i <= j {
		if binOf(cents[b.prims[i]], bestAxis, &cb, scale) <= bestBin {
			i++
		} else {
			b.prims[i], b.prims[j] = b.prims[j], b.prims[i]
			j--
		}
	}
	return i
}

// refit recomputes every box bottom-up; children follow their parent in the
// node array, so a reverse sweep sees children first.
func (b *bvh) refit(tris []triangle) {
	for i := len(b.nodes) - 1; i >= 0; i-- {
		n := &b.nodes[i]
		box := emptyBox()
		if n.right < 0 {
			for _, p := range b.prims[n.start : n.start+n.count] {
				box.grow(triBox(&tris[p]))
			}
		} else {
			box = b.nodes[i+1].box
			box.grow(b.nodes[n.right].box)
		}
		n.box, n.mag = box, box.magnitude()
	}
}

// ray64 is a ray prepared for the padded float64 slab test.
type ray64 struct {
	o, d [3]float64
	omag float64
}

func newRay64(o, d [3]float32) ray64 {
	var r ray64
	for k := range 3 {
		r.o[k], r.d[k] = float64(o[k]), float64(d[k])
		r.omag = max(r.omag, math.Abs(r.o[k]))
	}
	return r
}

// enter clips [tmin, tmax] against the padded box of n and returns the entry
// parameter and whether the clipped interval is non-empty.
func (r *ray64) enter(n *bvhNode, tmin, tmax float64) (float64, bool) {
	pad := padRel*(n.mag+r.omag) + padAbs
	tn, tf := tmin, tmax
	for k := range 3 {
		lo, hi := n.box.lo[k]-pad, n.box.hi[k]+pad
		if r.d[k] == 0 {
			if !(r.o[k] >= lo && r.o[k] <= hi) {
				return 0, false
			}
			continue
		}
		t0, t1 := (lo-r.o[k])/r.d[k], (hi-r.o[k])/r.d[k]
		if t0 > t1 {
			t0, t1 = t1, t0
		}
		tn, tf = max(tn, t0), min(tf, t1)
	}
	return tn, tn <= tf
}

func widenLow(t float32) float64  { return float64(t) - math.Abs(float64(t))*tSlack }
func widenHigh(t float32) float64 { return float64(t) + math.Abs(float64(t))*tSlack }

type stackEntry struct {
	node  int32
	tnear float64
}

// closestBVH finds the closest hit: nearer child first, the other pushed with
// its entry parameter and skipped on pop if it starts beyond the best hit.
func (s *Scene) closestBVH(o, d [3]float32, tmin float32, mask uint8, best *Hit, skip []int32) {
	r := newRay64(o, d)
	nodes, lo := s.bvh.nodes, widenLow(tmin)
	var buf [geom.BVHStackDepth]stackEntry
	stack := buf[:0]
	if tn, ok := r.enter(&nodes[0], lo, widenHigh(best.T)); ok {
		stack = append(stack, stackEntry{0, tn})
	}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.tnear > widenHigh(best.T) {
			continue
		}
		ni := e.node
		for {
			n := &nodes[ni]
			if n.right < 0 {
				for _, p := range s.bvh.prims[n.start : n.start+n.count] {
					s.consider(o, d, tmin, p, mask, best, skip)
				}
				break
			}
			hi := widenHigh(best.T)
			left, right := ni+1, n.right
			tl, hl := r.enter(&nodes[left], lo, hi)
			tr, hr := r.enter(&nodes[right], lo, hi)
			if hl && hr {
				if tr < tl {
					stack = append(stack, stackEntry{left, tl})
					ni = right
				} else {
					stack = append(stack, stackEntry{right, tr})
					ni = left
				}
			} else if hl {
				ni = left
			} else if hr {
				ni = right
			} else {
				break
			}
		}
	}
}

// anyHitBVH returns at the first accepted hit, left child first.
func (s *Scene) anyHitBVH(o, d [3]float32, tmin, tmax float32, mask uint8) bool {
	r := newRay64(o, d)
	nodes, lo, hi := s.bvh.nodes, widenLow(tmin), widenHigh(tmax)
	var buf [geom.BVHStackDepth]int32
	stack := append(buf[:0], 0)
	for len(stack) > 0 {
		ni := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := &nodes[ni]
		if _, ok := r.enter(n, lo, hi); !ok {
			continue
		}
		if n.right >= 0 {
			stack = append(stack, n.right, ni+1)
			continue
		}
		for _, p := range s.bvh.prims[n.start : n.start+n.count] {
			if !s.visibleTo(p, mask) {
				continue
			}
			tr := &s.tris[p]
			if _, _, _, ok := geom.Watertight(o, d, tr[0], tr[1], tr[2], tmin, tmax); ok {
				return true
			}
		}
	}
	return false
}
