package accel

import (
	"math/bits"

	"github.com/rayd-go/rayd/geom"
)

// wideBoxes is the device's slab test of every slot of a wide node (the quad
// node's arithmetic): entry distances are not needed, only the hit mask of
// the occupied slots.
func (r *slabRay) wideBoxes(w *WideNode, tmin, tcap float32) (hit uint32) {
	var scale, baseLo, baseHi [3]float32
	for a := range 3 {
		scale[a] = float32(w.Step[a] * r.inv[a])
		baseLo[a] = geom.FMA32(w.Origin[a], r.inv[a], -r.ooLo[a])
		baseHi[a] = geom.FMA32(w.Origin[a], r.inv[a], -r.ooHi[a])
	}
	for c := range wideSlots {
		var lo, hi [3]float32
		for a := range 3 {
			x := geom.FMA32(float32(w.Q[2*a][c]), scale[a], baseLo[a])
			y := geom.FMA32(float32(w.Q[2*a+1][c]), scale[a], baseHi[a])
			lo[a], hi[a] = geom.Fminf(x, y), geom.Fmaxf(x, y)
		}
		near := geom.Fmaxf(geom.Fmaxf(lo[0], lo[1]), geom.Fmaxf(lo[2], tmin))
		far := geom.Fminf(geom.Fminf(hi[0], hi[1]), geom.Fminf(hi[2], tcap))
		if near <= far {
			hit |= 1 << c
		}
	}
	return hit
}

// wideOrder is the slot permutation of a ray: slot k ^ wideOrder(inv) is
// visited k-th (bit a set when the reciprocal direction along a is ≥ 0).
func wideOrder(inv [3]float32) uint32 {
	x := uint32(0)
	for a := range 3 {
		if !(inv[a] < 0) {
			x |= 1 << a
		}
	}
	return x
}

// wideGroup is a node group of the traversal stack: the child base of a
// wide node, its internal-slot mask and the internal slots still to visit,
// as bits k of the visiting order (slot k ^ order).
type wideGroup struct {
	base, imask, todo uint32
}

// traceWide is trace over a Width 8 layout (rayd.cuh traverse8 as one lane
// runs it alone): a node's hit internal children are visited in the ray's
// octant order, the triangles of its hit leaves are tested right after the
// node (the device postpones them while other lanes of its warp still
// traverse, which changes the order of the tests, never the hit: the
// closest-hit rule is order-independent). Stack entries are node groups
// with their unvisited hit children.
func (l *Layout) traceWide(r *slabRay, o, d [3]float32, tmin float32, best Hit, any bool, st *TraceStats) Hit {
	x := wideOrder(r.inv)
	stack := make([]wideGroup, 0, MaxDepth)
	g := wideGroup{base: 0, imask: 1, todo: 1 << x}
	for {
		for g.todo == 0 {
			if len(stack) == 0 {
				return best
			}
			g = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		}
		k := uint32(bits.TrailingZeros32(g.todo))
		g.todo &^= 1 << k
		s := k ^ x
		idx := g.base + uint32(bits.OnesCount32(g.imask&(1<<s-1)))
		if g.todo != 0 {
			stack = append(stack, g)
			if st != nil {
				st.MaxStack = max(st.MaxStack, len(stack))
			}
		}
		if st != nil {
			st.Nodes++
		}
		w := l.WideNode(int(idx))
		hit := r.wideBoxes(&w, tmin, best.T)
		g = wideGroup{base: w.ChildBase, imask: w.IMask}
		var tris uint32
		for c := range uint32(wideSlots) {
			if hit>>c&1 == 0 {
				continue
			}
			if w.IMask>>c&1 != 0 {
				g.todo |= 1 << (c ^ x)
				continue
			}
			m := w.Meta[c]
			tris |= (1<<(m&7) - 1) << (m >> 3)
		}
		for ; tris != 0; tris &= tris - 1 {
			k := int(w.TriBase) + bits.TrailingZeros32(tris)
			if l.leafTest(LeafRef(k, 1), o, d, tmin, &best, any, st) && any {
				return best
			}
		}
	}
}
