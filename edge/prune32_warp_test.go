package edge

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// This file mirrors the lane and warp logic of rayd_edge_nearest_ray
// (ptx/src/edge.cu, ray_lane and the kernel loop) over an Index: 32 lanes
// take rows from their warp's share as they finish one, step one node or
// record at a time, keep a record that passes the prefilters as their
// candidate (waiting when a second one comes or the walk ends), and resolve
// candidates together once half of the busy lanes hold one. Lanes interact
// only through the two ballots, so running the phases lane by lane, in the
// kernel's order, is the warp's behaviour.

const (
	stepOK = iota
	stepDone
	stepWait
)

// ref32 is a child reference: ≥ 0 an internal node, < 0 the leaf ^node
// (records x.ids[first:first+count], the leaf order slots).
func (x *Index) ref32(n int32) int32 {
	if x.nodes[n].count > 0 {
		return ^n
	}
	return n
}

// rayLane mirrors struct ray_lane.
type rayLane struct {
	x             *Index
	o, d          vec
	T             float64
	df            [3]float32
	d2, t, s      float64
	k, gid        int
	f             q32
	test          bool
	pend          int
	stack         []int32
	node          int32
	cur, end      int
	done          bool // node == EDGE_DONE
	exacts, waits int
}

func (l *rayLane) start(o, d vec, T, B float64) {
	*l = rayLane{x: l.x, o: o, d: d, T: T, d2: math.Inf(1), k: -1, gid: -1, pend: -1, exacts: l.exacts, waits: l.waits}
	l.df = [3]float32{float32(d[0]), float32(d[1]), float32(d[2])}
	l.f, l.test = setup32(o, d, T, B)
	if !l.test {
		l.scanAll()
	}
}

func (l *rayLane) scanAll() {
	l.stack, l.cur, l.end, l.done = l.stack[:0], 0, l.x.s.Edges.Len(), true
}

// candidate mirrors ray_lane::candidate for record slot (edge x.ids[slot]).
func (l *rayLane) candidate(slot int) bool {
	id := int(l.x.ids[slot])
	if !l.x.s.enabled(id) {
		return false
	}
	if !l.test {
		return true
	}
	a, b := l.x.s.endpoints(id)
	lo, hi := edgeBox(a, b)
	return l.f.hit(lo, hi) && !l.f.far(l.df, float32(l.T), a, b)
}

func (l *rayLane) step() int {
	if l.cur < l.end {
		if l.candidate(l.cur) {
			if l.pend >= 0 {
				l.waits++
				return stepWait
			}
			l.pend = l.cur
		}
		l.cur++
		return stepOK
	}
	if l.done {
		if l.pend >= 0 {
			l.waits++
			return stepWait
		}
		return stepDone
	}
	pop := func() {
		if n := len(l.stack); n > 0 {
			l.node, l.stack = l.stack[n-1], l.stack[:n-1]
		} else {
			l.done = true
		}
	}
	if l.node < 0 {
		nd := &l.x.nodes[^l.node]
		l.cur, l.end = int(nd.first), int(nd.first+nd.count)
		pop()
		return stepOK
	}
	nd := &l.x.nodes[l.node]
	r0, r1 := l.x.ref32(nd.left), l.x.ref32(nd.right)
	l0, h0 := box32(l.x.nodes[nd.left].lo, l.x.nodes[nd.left].hi)
	l1, h1 := box32(l.x.nodes[nd.right].lo, l.x.nodes[nd.right].hi)
	hit0, hit1 := l.f.hit(l0, h0), l.f.hit(l1, h1)
	switch {
	case hit0 && hit1:
		swap := l.f.key(l.df, float32(l.T), l1, h1) < l.f.key(l.df, float32(l.T), l0, h0)
		if swap {
			l.stack, l.node = append(l.stack, r0), r1
		} else {
			l.stack, l.node = append(l.stack, r1), r0
		}
	case hit0:
		l.node = r0
	case hit1:
		l.node = r1
	default:
		pop()
	}
	return stepOK
}

func (l *rayLane) resolve() {
	id := int(l.x.ids[l.pend])
	a, b := l.x.s.endpoints(id)
	ti, si, di := raySegment(l.o, l.d, l.T, a, b)
	l.exacts++
	if di < l.d2 || (di == l.d2 && id < l.gid) {
		closer := di < l.d2
		l.d2, l.t, l.s, l.k, l.gid = di, ti, si, l.pend, id
		if closer && l.test {
			l.f.radius(l.d2)
		}
	}
	l.pend = -1
}

// rayRow is one query and its answer (id −1: a miss).
type rayRow struct {
	o, d     vec
	T        float64
	id       int
	t, s, d2 float64
	answered bool
}

// warpRays runs the kernel loop of one warp over rows (its share) and fills
// every row's answer; it returns the loop iterations and lane totals.
func (x *Index) warpRays(rows []rayRow) (iters, exacts, waits, phases int) {
	root := &x.nodes[0]
	B := max(absMax3(root.lo), absMax3(root.hi))
	var lanes [32]rayLane
	row := [32]int{}
	drained, waiting := [32]bool{}, [32]bool{}
	next := 0
	for j := range lanes {
		lanes[j].x, lanes[j].pend, row[j] = x, -1, -1
	}
	for {
		for j := range lanes {
			if row[j] < 0 && !drained[j] {
				drained[j] = next >= len(rows)
				if !drained[j] {
					row[j] = next
					next++
					q := &rows[row[j]]
					lanes[j].start(q.o, q.d, q.T, B)
					if x.nodes[0].count > 0 { // a one-leaf tree: its records directly
						lanes[j].cur, lanes[j].end, lanes[j].done = 0, int(x.nodes[0].count), true
					}
				}
			}
		}
		all := true
		for j := range lanes {
			all = all && row[j] < 0
		}
		if all {
			break
		}
		iters++
		for j := range lanes {
			st := stepWait
			if row[j] >= 0 && (lanes[j].pend < 0 || !waiting[j]) {
				st = lanes[j].step()
			}
			waiting[j] = st == stepWait
			if st == stepDone {
				l, q := &lanes[j], &rows[row[j]]
				q.id, q.t, q.s, q.d2, q.answered = -1, 0, 0, math.Inf(1), true
				if l.k >= 0 {
					q.id, q.t, q.s, q.d2 = l.gid, l.t, l.s, l.d2
				}
				row[j] = -1
			}
		}
		var held, busy uint32
		for j := range lanes {
			if row[j] >= 0 {
				busy |= 1 << j
				if lanes[j].pend >= 0 {
					held |= 1 << j
				}
			}
		}
		phase := false
		for j := range lanes {
			if held&(1<<j) != 0 && (2*bits.OnesCount32(held) >= bits.OnesCount32(busy) || !lanes[j].test) {
				lanes[j].resolve()
				waiting[j], phase = false, true
			}
		}
		if phase {
			phases++
		}
	}
	for j := range lanes {
		exacts, waits = exacts+lanes[j].exacts, waits+lanes[j].waits
	}
	return iters, exacts, waits, phases
}

// TestPrune32WarpEqualsScan: the mirrored warp loop (refills, deferred
// candidates, waits, batched float64 distances) answers every row of a
// share exactly as the brute-force scan, on the walk scenes at three scales
// and beyond the test's range, with and without a mask.
func TestPrune32WarpEqualsScan(t *testing.T) {
	share := 160
	if testing.Short() {
		share = 64
	}
	if *prune32Rows > 0 {
		share = *prune32Rows
	}
	seed := rand.Uint64()
	for _, sc := range []struct {
		name string
		c, s float64
	}{{"unit", 0, 1}, {"offset", 1e4, 1e-2}, {"huge", 0, 1e22}, {"beyond", 0, 1e30}} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(len(sc.name))))
			for name, s := range walkScenes(r, sc.c, sc.s) {
				x := NewIndex(s)
				for _, masked := range []bool{false, true} {
					if masked {
						m := make([]bool, s.Edges.Len())
						for i := range m {
							m[i] = r.IntN(3) != 0
						}
						s.Mask = m
					}
					rows := make([]rayRow, share)
					for i := range rows {
						rows[i].o, rows[i].d, rows[i].T = walkQuery(r, sc.c, sc.s)
					}
					iters, exacts, waits, phases := x.warpRays(rows)
					for i, q := range rows {
						wid, wt, wse, wd2 := s.nearestRay(q.o, q.d, q.T)
						if !q.answered || q.id != wid || math.Float64bits(q.d2) != math.Float64bits(wd2) ||
							math.Float64bits(q.t) != math.Float64bits(wt) || math.Float64bits(q.s) != math.Float64bits(wse) {
							t.Fatalf("%s/%s masked %v row %d: warp (%v %d, %g, %g, %g), scan (%d, %g, %g, %g)",
								sc.name, name, masked, i, q.answered, q.id, q.d2, q.t, q.s, wid, wd2, wt, wse)
						}
					}
					if sc.name == "unit" && name == "soup" && !masked {
						t.Logf("unit soup, %d rows on 32 lanes: %d iterations, %d float64 distances in %d batches, %d lane waits",
							share, iters, exacts, phases, waits)
					}
				}
			}
		})
	}
}
