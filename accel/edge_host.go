package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/edge"
)

// BuildEdgesHost builds on the host, bit for bit, the traversal layout that
// BuildEdgesWith builds on the device from the same vertices, edge table
// and options: the BVH of one degenerate triangle (v0, v1, v1) per edge.
// Layout.NearestEdgeRay walks it as the ray kernels do.
func BuildEdgesHost(vertices []float32, e EdgeTables, opt Options) (*Layout, error) {
	if opt.Width != 2 {
		return nil, fmt.Errorf("accel: the edge BVH has child-pair nodes (Width 2), not %d", opt.Width)
	}
	if err := e.check(len(vertices) / 3); err != nil {
		return nil, err
	}
	faces := make([]int32, 3*e.Len())
	for i := range e.Len() {
		faces[3*i], faces[3*i+1], faces[3*i+2] = e.V0[i], e.V1[i], e.V1[i]
	}
	return buildHost(vertices, faces, e.ShapeID, e.LocalID, opt)
}

// EdgeRayStats counts the work of host edge ray walks (Layout.NearestEdgeRay).
type EdgeRayStats struct {
	Rows     int // rows walked
	Deferred int // rows of the pruned kernels left to the float64 walk of rayd_edge_nearest_ray_deferred
	Nodes    int // nodes opened (both child boxes tested)
	Boxes    int // child box tests
	Leaves   int // leaves opened
	Records  int // leaf records read (masked ones included)
	Exact    int // float64 closest pairs evaluated (ray_segment)
	Improved int // times the row's best changed
	MaxStack int // deepest traversal stack
	Scans    int // rows whose float64 walk's stack would have overflowed (every record scanned)
}

// Add accumulates o into s (MaxStack: the larger).
func (s *EdgeRayStats) Add(o EdgeRayStats) {
	s.Rows += o.Rows
	s.Deferred += o.Deferred
	s.Nodes += o.Nodes
	s.Boxes += o.Boxes
	s.Leaves += o.Leaves
	s.Records += o.Records
	s.Exact += o.Exact
	s.Improved += o.Improved
	s.MaxStack = max(s.MaxStack, o.MaxStack)
	s.Scans += o.Scans
}

// EdgeRayHit is the best edge of one ray row: its squared distance, the
// ray and edge parameters of the closest pair, its record slot and global
// edge id (Slot −1 and Global −1 on a miss, D2 +Inf).
type EdgeRayHit struct {
	D2, T, S float64
	Slot     int
	Global   int32
}

// edgeStack is the traversal stack size of the edge kernels (EDGE_STACK).
const edgeStack = MaxDepth + 2

// edgeWalk is the state of one host edge ray walk over an edge BVH layout
// (records: a, b and the global edge id in the prim word).
type edgeWalk struct {
	l    *Layout
	mask []bool
	o, d [3]float64
	T    float64
	best EdgeRayHit
	st   *EdgeRayStats
}

// record returns the endpoints and global edge id of record slot k.
func (w *edgeWalk) record(k int) (a, b [3]float32, gid int32) {
	tr := w.l.Triangle(k)
	return tr.V[0], tr.V[1], tr.Prim
}

func f64(v [3]float32) [3]float64 { return [3]float64{float64(v[0]), float64(v[1]), float64(v[2])} }

// exact evaluates record k with the float64 closest pair and keeps it when
// it beats the best (smaller d², then lower id); it reports whether the
// squared distance decreased.
func (w *edgeWalk) exact(k int, a, b [3]float32, gid int32) bool {
	w.st.Exact++
	t, s, d2 := edge.RaySegment(w.o, w.d, w.T, f64(a), f64(b))
	if d2 < w.best.D2 || (d2 == w.best.D2 && gid < w.best.Global) {
		closer := d2 < w.best.D2
		w.best = EdgeRayHit{D2: d2, T: t, S: s, Slot: k, Global: gid}
		w.st.Improved++
		return closer
	}
	return false
}

func (w *edgeWalk) enabled(gid int32) bool { return len(w.mask) == 0 || w.mask[gid] }

// scanAll evaluates every enabled record (the float64 walk's stack-overflow
// path), keeping the best so far.
func (w *edgeWalk) scanAll() {
	w.st.Scans++
	for k := range w.l.NumTris {
		if a, b, gid := w.record(k); w.enabled(gid) {
			w.exact(k, a, b, gid)
		}
	}
}

// NearestEdgeRay walks the edge BVH layout l (BuildEdgesHost) for one ray
// row exactly as kernel k walks it on the device: the same tests in the same
// order, so st counts the device's work and the result is the kernel's
// record. EdgeRaySpec is the exception in order only: its steps depend on
// the other rows of its warp, so st counts the pruned walk's work, and the
// result is still the kernel's record. The row is o + t·d, t ∈ [0, max(tmax, 0)] (tmax +Inf, the value of
// a nil TMax: the half ray); a non-finite o or d or a NaN tmax is a miss, as
// is every row of an empty layout. mask (by global edge id) may be nil; st
// may be nil.
func (l *Layout) NearestEdgeRay(k EdgeRayKernel, o, d [3]float32, tmax float32, mask []bool, st *EdgeRayStats) EdgeRayHit {
	if st == nil {
		st = &EdgeRayStats{}
	}
	T := math.Inf(1)
	if t := float64(tmax); !math.IsInf(t, 1) {
		T = max(t, 0) // NaN stays NaN: a miss below
	}
	w := &edgeWalk{l: l, mask: mask, o: f64(o), d: f64(d), T: T, st: st,
		best: EdgeRayHit{D2: math.Inf(1), Slot: -1, Global: -1}}
	st.Rows++
	if !finite3(o) || !finite3(d) || math.IsNaN(T) || l.NumNodes == 0 || l.NumTris == 0 {
		return w.best
	}
	if k == EdgeRayExact {
		w.walkExact()
		return w.best
	}
	var q q32
	if !q.setup(o, d, T, sceneBound(l.Node(0))) || !w.walkPruned(&q) {
		st.Deferred++
		w.best = EdgeRayHit{D2: math.Inf(1), Slot: -1, Global: -1}
		w.walkExact()
	}
	return w.best
}

// walkExact is walk<ray_q> of edge.cu: float64 bounds rounded down to
// float32 on the stack, nearer child first, a prune when the bound exceeds
// the best by more than a relative 1e-9 and the absolute margin of
// ray_margin.
func (w *edgeWalk) walkExact() {
	m := max(sceneBound(w.l.Node(0)), math.Abs(w.o[0]), math.Abs(w.o[1]), math.Abs(w.o[2]))
	abs := max(1e-12*m*m, math.SmallestNonzeroFloat64)
	type entry struct {
		ref int32
		bnd float32
	}
	var stack [edgeStack]entry
	sp := 1
	pruned := func(b float32) bool {
		return float64(b) > w.best.D2*(1+1e-9)+abs
	}
	for sp > 0 {
		sp--
		e := stack[sp]
		if pruned(e.bnd) {
			continue
		}
		if e.ref < 0 {
			w.leafExact(e.ref)
			continue
		}
		w.st.Nodes++
		n := w.l.Node(int(e.ref))
		b0 := edge.RayBoxBound(w.o, w.d, w.T, f64(n.Lo[0]), f64(n.Hi[0]))
		w.st.Boxes++
		if sp+2 > edgeStack {
			w.scanAll()
			return
		}
		if n.Ref[1] == n.Ref[0] {
			stack[sp] = entry{n.Ref[0], rd32(b0)}
			sp++
			continue
		}
		b1 := edge.RayBoxBound(w.o, w.d, w.T, f64(n.Lo[1]), f64(n.Hi[1]))
		w.st.Boxes++
		if b0 <= b1 {
			stack[sp], stack[sp+1] = entry{n.Ref[1], rd32(b1)}, entry{n.Ref[0], rd32(b0)}
		} else {
			stack[sp], stack[sp+1] = entry{n.Ref[0], rd32(b0)}, entry{n.Ref[1], rd32(b1)}
		}
		sp += 2
		w.st.MaxStack = max(w.st.MaxStack, sp)
	}
}

func (w *edgeWalk) leafExact(ref int32) {
	first, count := DecodeLeaf(ref)
	w.st.Leaves++
	for k := first; k < first+count; k++ {
		w.st.Records++
		if a, b, gid := w.record(k); w.enabled(gid) {
			w.exact(k, a, b, gid)
		}
	}
}

// rd32 is __double2float_rd: the largest float32 not above x.
func rd32(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

// walkPruned is the traversal of rayd_edge_nearest_ray: a stack entry keeps
// its test value v and is dropped when it pops with v above the current
// rf2; a node's children are tested with q32_box and the kept ones pushed,
// the smaller key on top; a leaf's enabled records pass q32_edge before the
// float64 closest pair; the radius follows every closer best. False: the
// stack would have overflowed (the row is deferred).
func (w *edgeWalk) walkPruned(q *q32) bool {
	type entry struct {
		ref int32
		v   float32
	}
	var stack [edgeStack]entry
	sp := 1
	for sp > 0 {
		sp--
		e := stack[sp]
		if e.v > q.rf2 {
			continue
		}
		if e.ref < 0 {
			first, count := DecodeLeaf(e.ref)
			w.st.Leaves++
			for k := first; k < first+count; k++ {
				w.st.Records++
				a, b, gid := w.record(k)
				if !w.enabled(gid) || q.edge(a, b) > q.rf2 {
					continue
				}
				if w.exact(k, a, b, gid) {
					q.radius(w.best.D2)
				}
			}
			continue
		}
		w.st.Nodes++
		n := w.l.Node(int(e.ref))
		v0, k0 := q.box(n.Lo[0], n.Hi[0])
		w.st.Boxes++
		h0 := !(v0 > q.rf2)
		h1 := false
		var v1, k1 float32
		if n.Ref[1] != n.Ref[0] {
			v1, k1 = q.box(n.Lo[1], n.Hi[1])
			w.st.Boxes++
			h1 = !(v1 > q.rf2)
		}
		switch {
		case h0 && h1:
			if sp+2 > edgeStack {
				return false
			}
			if k1 < k0 {
				stack[sp], stack[sp+1] = entry{n.Ref[0], v0}, entry{n.Ref[1], v1}
			} else {
				stack[sp], stack[sp+1] = entry{n.Ref[1], v1}, entry{n.Ref[0], v0}
			}
			sp += 2
		case h0:
			stack[sp] = entry{n.Ref[0], v0}
			sp++
		case h1:
			stack[sp] = entry{n.Ref[1], v1}
			sp++
		}
		w.st.MaxStack = max(w.st.MaxStack, sp)
	}
	return true
}
