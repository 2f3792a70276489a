package accel

import (
	"math"
	"sort"

	"github.com/rayd-go/rayd/geom"
)

// Hit is the closest hit of one ray: T, barycentrics U (of v1) and V (of
// v2), the triangle slot in the layout and its global prim id (−1 on a miss).
type Hit struct {
	T, U, V float32
	Slot    int
	Prim    int32
}

// TraceStats counts the work of one or more host traversals.
type TraceStats struct {
	Rays     int // rays traced
	Nodes    int // child-pair nodes fetched
	Leaves   int // leaves entered
	Tris     int // triangle tests
	MaxStack int // deepest stack seen
}

// slabRay is the per-ray setup of the device's box test: reciprocal
// direction and the origin terms of the lo and hi planes, shifted by the
// ray's share of the box inflation.
type slabRay struct {
	inv, ooLo, ooHi [3]float32
}

func newSlabRay(o, d [3]float32) slabRay {
	var r slabRay
	r.inv = geom.Reciprocal(d)
	m := float32(0)
	for c := range 3 {
		m = max2(m, float32(math.Abs(float64(o[c]))))
	}
	e := float32(m * InflateScale)
	for c := range 3 {
		r.ooLo[c] = float32(float32(o[c]+e) * r.inv[c])
		r.ooHi[c] = float32(float32(o[c]-e) * r.inv[c])
	}
	return r
}

// box is the device slab test of child c of node n against [tmin, tcap].
func (r *slabRay) box(n *Node, c int, tmin, tcap float32) (near float32, hit bool) {
	var lo, hi [3]float32
	for k := range 3 {
		a := geom.FMA32(n.Lo[c][k], r.inv[k], -r.ooLo[k])
		b := geom.FMA32(n.Hi[c][k], r.inv[k], -r.ooHi[k])
		lo[k], hi[k] = geom.Fminf(a, b), geom.Fmaxf(a, b)
	}
	near = geom.Fmaxf(geom.Fmaxf(lo[0], lo[1]), geom.Fmaxf(lo[2], tmin))
	far := geom.Fminf(geom.Fminf(hi[0], hi[1]), geom.Fminf(hi[2], tcap))
	return near, near <= far
}

func finite3(v [3]float32) bool {
	for _, x := range v {
		if float32(x-x) != 0 {
			return false
		}
	}
	return true
}

// leafTest tests the triangles of leaf ref against the current best hit.
// It stops at the first accepted hit when any is set.
func (l *Layout) leafTest(ref int32, o, d [3]float32, tmin float32, best *Hit, any bool, st *TraceStats) bool {
	first, count := DecodeLeaf(ref)
	if st != nil {
		st.Leaves++
		st.Tris += count
	}
	for k := first; k < first+count; k++ {
		tri := l.Triangle(k)
		t, u, v, ok := geom.Watertight(o, d, tri.V[0], tri.V[1], tri.V[2], tmin, best.T)
		// Watertight already bounds t by best.T; at equal t the lower prim wins.
		if !ok || !(t < best.T || uint32(tri.Prim) < uint32(best.Prim)) {
			continue
		}
		*best = Hit{T: t, U: u, V: v, Slot: k, Prim: tri.Prim}
		if any {
			return true
		}
	}
	return false
}

// Closest mirrors the device's closest-hit traversal: the hit with the
// smallest t in [tmin, tmax], the lowest prim id among equal t. A row with a
// non-finite origin or direction misses. st may be nil.
func (l *Layout) Closest(o, d [3]float32, tmin, tmax float32, st *TraceStats) Hit {
	return l.trace(o, d, tmin, tmax, false, st)
}

// AnyHit reports whether some triangle is hit with t in [tmin, tmax]
// (the device's occlusion traversal: no ordering, first hit ends it).
func (l *Layout) AnyHit(o, d [3]float32, tmin, tmax float32, st *TraceStats) bool {
	return l.trace(o, d, tmin, tmax, true, st).Prim >= 0
}

func (l *Layout) trace(o, d [3]float32, tmin, tmax float32, any bool, st *TraceStats) Hit {
	best := Hit{T: tmax, Slot: -1, Prim: -1}
	if st != nil {
		st.Rays++
	}
	if !finite3(o) || !finite3(d) || l.NumNodes == 0 {
		return best
	}
	r := newSlabRay(o, d)
	switch l.Width {
	case 4:
		return l.traceQuad(&r, o, d, tmin, best, any, st)
	case 8:
		return l.traceWide(&r, o, d, tmin, best, any, st)
	}
	var stack [MaxDepth + 1]int32
	sp := 0
	node := int32(0)
	for {
		if node >= 0 {
			if st != nil {
				st.Nodes++
			}
			nd := l.Node(int(node))
			n0, h0 := r.box(&nd, 0, tmin, best.T)
			n1, h1 := r.box(&nd, 1, tmin, best.T)
			switch {
			case h0 && h1:
				near, far := nd.Ref[0], nd.Ref[1]
				if n1 < n0 && !any {
					near, far = far, near
				}
				stack[sp] = far
				sp++
				if st != nil {
					st.MaxStack = max(st.MaxStack, sp)
				}
				node = near
				continue
			case h0:
				node = nd.Ref[0]
				continue
			case h1:
				node = nd.Ref[1]
				continue
			}
		} else if l.leafTest(node, o, d, tmin, &best, any, st) && any {
			return best
		}
		if sp == 0 {
			break
		}
		sp--
		node = stack[sp]
	}
	return best
}

// quadBoxes is the device's slab test of every slot of a quad node: entry
// distances and the hit mask.
func (r *slabRay) quadBoxes(q *QuadNode, tmin, tcap float32) (near [quadSlots]float32, hit [quadSlots]bool) {
	var scale, baseLo, baseHi [3]float32
	for a := range 3 {
		scale[a] = float32(q.Step[a] * r.inv[a])
		baseLo[a] = geom.FMA32(q.Origin[a], r.inv[a], -r.ooLo[a])
		baseHi[a] = geom.FMA32(q.Origin[a], r.inv[a], -r.ooHi[a])
	}
	for c := range q.Slots {
		var lo, hi [3]float32
		for a := range 3 {
			ql := float32((q.Q[2*a] >> (8 * c)) & 0xff)
			qh := float32((q.Q[2*a+1] >> (8 * c)) & 0xff)
			x := geom.FMA32(ql, scale[a], baseLo[a])
			y := geom.FMA32(qh, scale[a], baseHi[a])
			lo[a], hi[a] = geom.Fminf(x, y), geom.Fmaxf(x, y)
		}
		near[c] = geom.Fmaxf(geom.Fmaxf(lo[0], lo[1]), geom.Fmaxf(lo[2], tmin))
		far := geom.Fminf(geom.Fminf(hi[0], hi[1]), geom.Fminf(hi[2], tcap))
		hit[c] = near[c] <= far
	}
	return near, hit
}

// traceQuad is trace over a Width-4 layout: the hit slots of a node are
// visited nearest first (any-hit: in slot order).
func (l *Layout) traceQuad(r *slabRay, o, d [3]float32, tmin float32, best Hit, any bool, st *TraceStats) Hit {
	stack := make([]int32, 0, 3*MaxDepth)
	node := int32(0)
	for {
		if node >= 0 {
			if st != nil {
				st.Nodes++
			}
			q := l.QuadNode(int(node))
			near, hit := r.quadBoxes(&q, tmin, best.T)
			var order []int
			for c := range q.Slots {
				if hit[c] {
					order = append(order, c)
				}
			}
			if !any {
				sort.SliceStable(order, func(a, b int) bool { return near[order[a]] < near[order[b]] })
			}
			if len(order) > 0 {
				for k := len(order) - 1; k >= 1; k-- {
					stack = append(stack, q.Ref[order[k]])
				}
				if st != nil {
					st.MaxStack = max(st.MaxStack, len(stack))
				}
				node = q.Ref[order[0]]
				continue
			}
		} else if l.leafTest(node, o, d, tmin, &best, any, st) && any {
			return best
		}
		if len(stack) == 0 {
			return best
		}
		node = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
	}
}

// ClosestBrute is the brute-force closest hit over every slot (the device's
// rayd_intersect_brute).
func (l *Layout) ClosestBrute(o, d [3]float32, tmin, tmax float32) Hit {
	best := Hit{T: tmax, Slot: -1, Prim: -1}
	if !finite3(o) || !finite3(d) {
		return best
	}
	for k := range l.NumTris {
		l.leafTest(LeafRef(k, 1), o, d, tmin, &best, false, nil)
	}
	return best
}
