package edge

import (
	"math"
)

// This file mirrors, operation for operation, the float32 pruning test of
// the GPU nearest-edge ray query (ptx/src/edge_prune.cuh) and the ray
// kernel's traversal over a tree (ptx/src/edge.cu, rayd_edge_nearest_ray),
// so that prune32_test.go can check on the host that the test never drops
// an edge the brute-force scan could pick. Every float32 operation is one
// Go float32 operation (explicit conversions keep products from fusing);
// the float64 operations are the kernel's __dmul_rn/__dadd_rn sequence.

// Constants of edge_prune.cuh.
const (
	flat32     = 0x1p-40  // EDGE32_FLAT
	range32    = 0x1p80   // EDGE32_RANGE
	rel32      = 0x1p-18  // EDGE32_REL
	floor32    = 0x1p-120 // EDGE32_FLOOR
	sphereLo32 = 0x1p-40  // EDGE32_SPHERE_LO
	sphereHi32 = 0x1p56   // EDGE32_SPHERE_HI
	dirLo32    = 0x1p-56  // EDGE32_DIR_LO
	useSphere  = 8        // EDGE32_USE_SPHERE
)

const cap32 = float32(0x1p100) // EDGE32_CAP

var (
	nan32 = float32(math.NaN())
	inf32 = float32(math.Inf(1))
)

// q32 mirrors struct q32: the origin, the rounded reciprocals of the
// normalized direction (NaN on a flat axis), the rounded-up range end, the
// lo/hi plane offsets o ± Rm, the absolute margin and the flat axes.
type q32 struct {
	o, iv, l, h   [3]float32
	tmax, inn, rs float32
	base          float64
	flat          int
}

// ru32 is __double2float_ru: the least float32 not below x (x ≥ 0 here).
func ru32(x float64) float32 {
	if x > math.MaxFloat32 {
		return inf32
	}
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, inf32)
	}
	return f
}

// fminf and fmaxf are CUDA's: a NaN operand yields the other one.
func fminf(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b, a <= b:
		return a
	}
	return b
}

func fmaxf(a, b float32) float32 {
	switch {
	case a != a:
		return b
	case b != b, a >= b:
		return a
	}
	return b
}

func absMax3(v vec) float64 { return max(math.Abs(v[0]), math.Abs(v[1]), math.Abs(v[2])) }

// radius is q32_radius: the inflation for the best squared distance.
func (q *q32) radius(best float64) {
	rm := cap32
	if best < math.Inf(1) {
		r := float64(math.Sqrt(best)*(1+rel32)) + q.base
		if r < float64(cap32) {
			rm = ru32(r)
		}
	}
	for k := range 3 {
		q.l[k] = q.o[k] + rm
		q.h[k] = q.o[k] - rm
	}
	q.rs = ru32(float64(rm) + 4*q.base)
}

// setup is q32_setup for the query o + t·d, t ∈ [0, T], over a scene of
// bound B; false outside the test's range.
func setup32(o, d vec, T, B float64) (q q32, ok bool) {
	om := absMax3(o)
	if !(om <= range32 && B <= range32) {
		return q, false
	}
	var n vec
	tau := 0.0
	if dm := absMax3(d); dm > 0 {
		e := int64(math.Float64bits(dm)>>52&0x7ff) - 1023
		down := math.Float64frombits(uint64(1023-e) << 52)
		up := math.Float64frombits(uint64(1023+e) << 52)
		n = vec{d[0] * down, d[1] * down, d[2] * down}
		tau = T * up
	}
	for k := range 3 {
		q.o[k] = float32(o[k])
		if math.Abs(n[k]) < flat32 {
			q.flat |= 1 << k
			q.iv[k] = nan32
		} else {
			q.iv[k] = float32(1 / n[k])
		}
	}
	q.tmax = ru32(tau)
	S := B + om
	q.base = float64(rel32*S) + floor32
	q.inn = float32(1 / (float64(float64(d[0]*d[0])+d[1]*d[1]) + d[2]*d[2]))
	if dm := absMax3(d); S >= sphereLo32 && S <= sphereHi32 && dm >= dirLo32 && dm <= sphereHi32 {
		q.flat |= useSphere
	}
	q.radius(math.Inf(1))
	return q, true
}

// hit is q32_hit for the box [lo, hi].
func (q *q32) hit(lo, hi [3]float32) bool {
	var a, b, t0, t1 [3]float32
	for k := range 3 {
		a[k] = lo[k] - q.l[k]
		b[k] = hi[k] - q.h[k]
		t0[k] = a[k] * q.iv[k]
		t1[k] = b[k] * q.iv[k]
	}
	tn := fmaxf(fmaxf(fminf(t0[0], t1[0]), fminf(t0[1], t1[1])), fmaxf(fminf(t0[2], t1[2]), 0))
	tf := fminf(fminf(fmaxf(t0[0], t1[0]), fmaxf(t0[1], t1[1])), fminf(fmaxf(t0[2], t1[2]), q.tmax))
	ok := tn <= tf
	for k := range 3 {
		if q.flat&(1<<k) != 0 {
			ok = ok && a[k] <= 0 && b[k] >= 0
		}
	}
	return ok
}

// sqrt32 is the correctly rounded float32 square root (__fsqrt_rn): the
// float64 root rounded once more is exact for float32 operands.
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// dot32 is ((x0·y0 + x1·y1) + x2·y2) with every operation rounded.
func dot32(x, y [3]float32) float32 {
	return float32(float32(x[0]*y[0])+float32(x[1]*y[1])) + float32(x[2]*y[2])
}

// far is q32_far: the sphere prefilter of the edge a→b for the query's
// float32 direction d and range T.
func (q *q32) far(d [3]float32, T float32, a, b vec) bool {
	if q.flat&useSphere == 0 {
		return false
	}
	var w, e [3]float32
	for k := range 3 {
		w[k] = (float32(a[k]) + float32(b[k])) - (q.o[k] + q.o[k])
		e[k] = float32(b[k]) - float32(a[k])
	}
	t := fminf(fmaxf(dot32(w, d)*q.inn, 0), T+T)
	for k := range 3 {
		w[k] -= float32(t * d[k])
	}
	return sqrt32(dot32(w, w))-sqrt32(dot32(e, e)) > q.rs+q.rs
}

// key is q32_key: the visit order of two accepted children.
func (q *q32) key(d [3]float32, T float32, lo, hi [3]float32) float32 {
	var w [3]float32
	for k := range 3 {
		w[k] = (lo[k] + hi[k]) - (q.o[k] + q.o[k])
	}
	t := fminf(fmaxf(dot32(w, d)*q.inn, 0), T+T)
	for k := range 3 {
		w[k] -= float32(t * d[k])
	}
	return dot32(w, w)
}

// box32 is a float64 box holding float32 values (the Index's boxes and
// edge boxes are exact minima and maxima of float32 coordinates).
func box32(lo, hi vec) (l, h [3]float32) {
	for k := range 3 {
		l[k], h[k] = float32(lo[k]), float32(hi[k])
	}
	return l, h
}

// edgeBox is the kernel's prefilter box of an edge.
func edgeBox(a, b vec) (lo, hi [3]float32) {
	for k := range 3 {
		lo[k], hi[k] = float32(min(a[k], b[k])), float32(max(a[k], b[k]))
	}
	return lo, hi
}

// walkStats counts the work of one mirrored traversal.
type walkStats struct {
	nodes, records, exact int
	scanned               bool // outside the test's range: every record
}

// nearestRay32 mirrors rayd_edge_nearest_ray over the Index: the scene
// bound from the root box, near-first descent by key with the far child
// pushed, leaf records prefiltered by their own box, the float64 distance
// and the brute-force rule (smaller d², then lower id) for the best, the
// inflation following each smaller best. Outside the test's range every
// record is scanned, as on the device.
func (x *Index) nearestRay32(o, d vec, T float64) (id int, t, se, d2 float64, st walkStats) {
	id, d2 = -1, math.Inf(1)
	if len(x.nodes) == 0 {
		return id, t, se, d2, st
	}
	root := &x.nodes[0]
	B := max(absMax3(root.lo), absMax3(root.hi))
	q, ok := setup32(o, d, T, B)
	df := [3]float32{float32(d[0]), float32(d[1]), float32(d[2])}
	record := func(i int) {
		st.records++
		if !x.s.enabled(i) {
			return
		}
		a, b := x.s.endpoints(i)
		if ok {
			if lo, hi := edgeBox(a, b); !q.hit(lo, hi) || q.far(df, float32(T), a, b) {
				return
			}
		}
		st.exact++
		ti, si, di := raySegment(o, d, T, a, b)
		if di < d2 || (di == d2 && i < id) {
			closer := di < d2
			id, t, se, d2 = i, ti, si, di
			if closer && ok {
				q.radius(d2)
			}
		}
	}
	if !ok {
		st.scanned = true
		for i := range x.s.Edges.Len() {
			record(i)
		}
		return id, t, se, d2, st
	}
	var stack []int32
	node := int32(0)
	for {
		nd := &x.nodes[node]
		st.nodes++
		if nd.count > 0 {
			for _, i := range x.ids[nd.first : nd.first+nd.count] {
				record(int(i))
			}
		} else {
			l0, h0 := box32(x.nodes[nd.left].lo, x.nodes[nd.left].hi)
			l1, h1 := box32(x.nodes[nd.right].lo, x.nodes[nd.right].hi)
			hit0, hit1 := q.hit(l0, h0), q.hit(l1, h1)
			switch {
			case hit0 && hit1:
				near, far := nd.left, nd.right
				if q.key(df, float32(T), l1, h1) < q.key(df, float32(T), l0, h0) {
					near, far = far, near
				}
				stack = append(stack, far)
				node = near
				continue
			case hit0:
				node = nd.left
				continue
			case hit1:
				node = nd.right
				continue
			}
		}
		if len(stack) == 0 {
			return id, t, se, d2, st
		}
		node = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
	}
}
