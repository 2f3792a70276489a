package edge

import (
	"math"
	"slices"
)

// Index is a bounding volume hierarchy over the edges of a Scene, answering
// the nearest-edge queries with the results of the brute-force scan (the
// same float64 distances, ties to the lowest global edge id) in logarithmic
// time per query instead of linear. It is the host mirror of the GPU edge
// BVH's traversal rule: visit the nearer child first, prune a node whose
// lower-bound distance exceeds the current best (the k-th best for top-k).
//
// An Index captures the geometry when it is built: rebuild it after the
// vertices of its Scene change. The mask is read at query time.
type Index struct {
	s     *Scene
	nodes []node
	ids   []int32 // edge ids in leaf order
	mag   float64 // the largest coordinate magnitude of the edges' box
}

// node is an interior node (count 0, children left and right) or a leaf
// over ids[first : first+count].
type node struct {
	lo, hi       vec
	left, right  int32
	first, count int32
}

// leafSize is the most edges in a leaf.
const leafSize = 4

// pruneSlack widens every lower bound comparison by a relative margin, so
// that the rounding of a bound can never prune an edge the scan keeps.
// absSlack adds an absolute margin of absSlack·M² (M the largest coordinate
// magnitude of the scene and the query): a bound of a box the query
// touches is 0 up to rounding of that order, and when the best distance is
// 0 itself (a query through an edge) a relative margin is no margin.
const (
	pruneSlack = 1e-9
	absSlack   = 1e-12
)

// NewIndex builds the Index of s's current edges: median splits on the
// longest axis of the edge centroids (ties by id, so the tree does not
// depend on the input order), node boxes computed bottom-up.
func NewIndex(s *Scene) *Index {
	x := &Index{s: s}
	n := s.Edges.Len()
	if n == 0 {
		return x
	}
	lo := make([]vec, n)
	hi := make([]vec, n)
	items := make([]item, n)
	for i := range n {
		a, b := s.endpoints(i)
		for k := range 3 {
			lo[i][k], hi[i][k] = min(a[k], b[k]), max(a[k], b[k])
			items[i].c[k] = (a[k] + b[k]) / 2
		}
		items[i].id = int32(i)
	}
	x.nodes = make([]node, 0, 2*n/leafSize+1)
	x.build(items, 0, lo, hi)
	for k := range 3 {
		x.mag = max(x.mag, math.Abs(x.nodes[0].lo[k]), math.Abs(x.nodes[0].hi[k]))
	}
	x.ids = make([]int32, n)
	for i, it := range items {
		x.ids[i] = it.id
	}
	return x
}

// item is an edge's centroid and id, moved together while the build
// partitions (contiguous, so each level's passes read memory in order).
type item struct {
	c  vec
	id int32
}

// before orders items by centroid on axis, then id.
func before(a, b *item, axis int) bool {
	return a.c[axis] < b.c[axis] || (a.c[axis] == b.c[axis] && a.id < b.id)
}

// build appends the subtree over items (the leaf order positions
// first … first+len(items)) in pre-order and returns its index.
func (x *Index) build(items []item, first int, lo, hi []vec) int32 {
	me := int32(len(x.nodes))
	x.nodes = append(x.nodes, node{})
	if len(items) <= leafSize {
		nd := node{lo: vec{math.Inf(1), math.Inf(1), math.Inf(1)}, hi: vec{math.Inf(-1), math.Inf(-1), math.Inf(-1)},
			first: int32(first), count: int32(len(items))}
		for _, it := range items {
			for k := range 3 {
				nd.lo[k], nd.hi[k] = min(nd.lo[k], lo[it.id][k]), max(nd.hi[k], hi[it.id][k])
			}
		}
		x.nodes[me] = nd
		return me
	}
	cmin := vec{math.Inf(1), math.Inf(1), math.Inf(1)}
	cmax := vec{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i := range items {
		for k := range 3 {
			cmin[k], cmax[k] = min(cmin[k], items[i].c[k]), max(cmax[k], items[i].c[k])
		}
	}
	axis := 0
	for k := 1; k < 3; k++ {
		if cmax[k]-cmin[k] > cmax[axis]-cmin[axis] {
			axis = k
		}
	}
	mid := len(items) / 2
	selectNth(items, mid, axis)
	l := x.build(items[:mid], first, lo, hi)
	r := x.build(items[mid:], first+mid, lo, hi)
	nd := node{left: l, right: r}
	for k := range 3 {
		nd.lo[k] = min(x.nodes[l].lo[k], x.nodes[r].lo[k])
		nd.hi[k] = max(x.nodes[l].hi[k], x.nodes[r].hi[k])
	}
	x.nodes[me] = nd
	return me
}

// selectNth reorders v so that v[n] is the item a full sort by before
// would put there, every item before it not after it and every item after
// it not before it (quickselect, median-of-three pivots): linear on
// average, which keeps the build at O(E log E).
func selectNth(v []item, n, axis int) {
	lo, hi := 0, len(v)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if before(&v[mid], &v[lo], axis) {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if before(&v[hi], &v[lo], axis) {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if before(&v[hi], &v[mid], axis) {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		i, j := lo, hi
		for i <= j {
			for before(&v[i], &pivot, axis) {
				i++
			}
			for before(&pivot, &v[j], axis) {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return
		}
	}
}

// pointBound is the squared distance from p to node box nd.
func pointBound(p vec, nd *node) float64 {
	var d2 float64
	for k := range 3 {
		if v := max(nd.lo[k]-p[k], 0, p[k]-nd.hi[k]); v > 0 {
			d2 += v * v
		}
	}
	return d2
}

// pruned reports whether a bound rules a node out against best, with the
// query's absolute margin abs.
func pruned(bound, best, abs float64) bool {
	return bound > best*(1+pruneSlack)+abs
}

// margin is the absolute pruning margin of a query at q (a point or a ray
// origin): absSlack·M², M the larger of the scene's and q's magnitudes.
func (x *Index) margin(q vec) float64 {
	m := x.mag
	for k := range 3 {
		m = max(m, math.Abs(q[k]))
	}
	return max(absSlack*m*m, math.SmallestNonzeroFloat64)
}

// visit walks the tree for a query whose node bound is bound, calling leaf
// for every edge of every leaf not pruned against limit() (re-read as the
// best improves); children are visited nearer first.
func (x *Index) visit(abs float64, bound func(*node) float64, limit func() float64, leaf func(id int)) {
	if len(x.nodes) == 0 {
		return
	}
	type entry struct {
		n     int32
		bound float64
	}
	stack := []entry{{0, bound(&x.nodes[0])}}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if pruned(e.bound, limit(), abs) {
			continue
		}
		nd := &x.nodes[e.n]
		if nd.count > 0 {
			for _, id := range x.ids[nd.first : nd.first+nd.count] {
				if x.s.enabled(int(id)) {
					leaf(int(id))
				}
			}
			continue
		}
		bl, br := bound(&x.nodes[nd.left]), bound(&x.nodes[nd.right])
		// Push the farther child first so that the nearer one pops first.
		if bl <= br {
			stack = append(stack, entry{nd.right, br}, entry{nd.left, bl})
		} else {
			stack = append(stack, entry{nd.left, bl}, entry{nd.right, br})
		}
	}
}

// nearestPoint is Scene.nearestPoint through the tree.
func (x *Index) nearestPoint(p vec) (id int, sBest float64, q vec, d2 float64) {
	id, d2 = -1, math.Inf(1)
	x.visit(x.margin(p), func(nd *node) float64 { return pointBound(p, nd) }, func() float64 { return d2 },
		func(i int) {
			a, b := x.s.endpoints(i)
			si, qi, di := pointSegment(p, a, b)
			if di < d2 || (di == d2 && i < id) {
				id, sBest, q, d2 = i, si, qi, di
			}
		})
	return id, sBest, q, d2
}

// nearestRay is Scene.nearestRay through the tree.
func (x *Index) nearestRay(o, d vec, tmax float64) (id int, t, se, d2 float64) {
	id, d2 = -1, math.Inf(1)
	x.visit(x.margin(o), func(nd *node) float64 { return rayBound(o, d, tmax, nd) }, func() float64 { return d2 },
		func(i int) {
			a, b := x.s.endpoints(i)
			ti, si, di := raySegment(o, d, tmax, a, b)
			if di < d2 || (di == d2 && i < id) {
				id, t, se, d2 = i, ti, si, di
			}
		})
	return id, t, se, d2
}

// rayBound is the squared distance from the query set o + t·d, t ∈ [0, T]
// (T = +Inf: the half ray), to node box nd: the minimum of a convex
// piecewise quadratic in t, found on each piece between the times the query
// crosses a slab plane.
func rayBound(o, d vec, T float64, nd *node) float64 {
	if T <= 0 {
		return pointBound(o, nd)
	}
	var cuts [8]float64
	ts := append(cuts[:0], 0)
	for k := range 3 {
		if d[k] == 0 {
			continue
		}
		for _, b := range [2]float64{nd.lo[k], nd.hi[k]} {
			if t := (b - o[k]) / d[k]; t > 0 && t < T {
				ts = append(ts, t)
			}
		}
	}
	slices.Sort(ts)
	ts = append(ts, T)
	best := math.Inf(1)
	for i := 0; i+1 < len(ts); i++ {
		t0, t1 := ts[i], ts[i+1]
		mid := t0 + 1
		if !math.IsInf(t1, 1) {
			mid = (t0 + t1) / 2
		}
		var qa, qb float64 // f(t) = qa·t² + qb·t + c on this piece
		for k := range 3 {
			x := o[k] + mid*d[k]
			var plane float64
			switch {
			case x < nd.lo[k]:
				plane = nd.lo[k]
			case x > nd.hi[k]:
				plane = nd.hi[k]
			default:
				continue
			}
			qa += d[k] * d[k]
			qb += 2 * d[k] * (o[k] - plane)
		}
		t := t0
		if qa > 0 {
			t = min(max(-qb/(2*qa), t0), t1)
		}
		if math.IsInf(t, 1) {
			continue
		}
		best = min(best, pointBound(axpy(t, d, o), nd))
	}
	return best
}

// nearestK fills best (capacity k) with the k nearest enabled edges of p by
// ascending (d², id) through the tree.
func (x *Index) nearestK(p vec, k int, best []kslot) []kslot {
	best = best[:0]
	limit := func() float64 {
		if len(best) < k {
			return math.Inf(1)
		}
		return best[k-1].d2
	}
	x.visit(x.margin(p), func(nd *node) float64 { return pointBound(p, nd) }, limit, func(id int) {
		a, b := x.s.endpoints(id)
		si, qi, di := pointSegment(p, a, b)
		best = insertK(best, k, kslot{d2: di, s: si, id: id, q: qi})
	})
	return best
}

// kslot is one candidate of a top-k query.
type kslot struct {
	d2, s float64
	id    int
	q     vec
}

// before orders candidates by (d², id).
func (a kslot) before(b kslot) bool { return a.d2 < b.d2 || (a.d2 == b.d2 && a.id < b.id) }

// insertK inserts c into best (sorted, at most k) when it is among the k
// nearest by (d², id).
func insertK(best []kslot, k int, c kslot) []kslot {
	if len(best) == k && !c.before(best[k-1]) {
		return best
	}
	j := len(best)
	if j < k {
		best = append(best, kslot{})
	} else {
		j = k - 1
	}
	for j > 0 && c.before(best[j-1]) {
		best[j] = best[j-1]
		j--
	}
	best[j] = c
	return best
}
