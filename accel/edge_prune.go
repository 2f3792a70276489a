package accel

import (
	"math"

	"github.com/rayd-go/rayd/geom"
)

// This file mirrors, operation for operation, the float32 tests of the GPU
// nearest-edge ray kernel (ptx/src/edge_prune.cuh, where the argument that
// they never drop a candidate is written out). Every float32 operation is
// one Go float32 operation whose result is converted explicitly, so that no
// product is fused into an addition, as the module is compiled on the device
// with -fmad=false.

// Constants of edge_prune.cuh.
const (
	prune32Rel   = 0x1p-20 // EDGE32_REL: relative slack of the radius
	prune32Abs   = 0x1p-18 // EDGE32_ABS: slack of the radius per unit of S
	prune32SLo   = 0x1p-40 // EDGE32_S_LO: least magnitude bound S of the float32 path
	prune32SHi   = 0x1p24  // EDGE32_S_HI: largest S
	prune32DirLo = 0x1p-40 // EDGE32_DIR_LO: least |d_k| of a non-flat axis
	prune32DirHi = 0x1p40  // EDGE32_DIR_HI: largest |d_k|
)

// q32 is the float32 form of one ray query (struct q32 of edge_prune.cuh):
// the origin, the direction, the rounded reciprocals of the non-flat
// direction components (0 on a flat axis, d_k = 0), the rounded reciprocal
// of |d|², the range T (+Inf: a half ray), the radius Rf with its rounded-up
// square, and the magnitude bound S = 2B + |o|∞.
type q32 struct {
	o, d, inv [3]float32
	idd, t    float32
	rf, rf2   float32
	s         float32 // ru32(2B + |o|∞)
	flat      [3]bool
}

// ru32 is __double2float_ru for x ≥ 0: the least float32 not below x.
func ru32(x float64) float32 {
	if x > math.MaxFloat32 {
		return float32(math.Inf(1))
	}
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// sceneBound is scene_bound of edge.cu: the largest |coordinate| of the two
// child boxes of the root (+Inf when one is not finite).
func sceneBound(root Node) float64 {
	m, sum := 0.0, 0.0
	for c := range 2 {
		for k := range 3 {
			for _, v := range [2]float32{root.Lo[c][k], root.Hi[c][k]} {
				m = max(m, math.Abs(float64(v)))
				sum += float64(v)
			}
		}
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return math.Inf(1)
	}
	return m
}

// setup is q32_setup: the float32 form of the query o + t·d, t ∈ [0, T],
// over a scene of bound B. False: the query is outside the range of the
// float32 path (the row then runs the float64 walk).
func (q *q32) setup(o, d [3]float32, T float64, B float64) bool {
	om := max(math.Abs(float64(o[0])), math.Abs(float64(o[1])), math.Abs(float64(o[2])))
	s := ru32(2*B + om)
	if !(s >= prune32SLo && s <= prune32SHi) {
		return false
	}
	nonflat := false
	for k := range 3 {
		a := math.Abs(float64(d[k]))
		q.flat[k] = d[k] == 0
		if q.flat[k] {
			q.inv[k] = 0
			continue
		}
		if !(a >= prune32DirLo && a <= prune32DirHi) {
			return false
		}
		nonflat = true
		q.inv[k] = float32(1) / d[k]
	}
	if !nonflat {
		return false
	}
	q.o, q.d, q.s = o, d, s
	dd := float32(float32(float32(d[0]*d[0])+float32(d[1]*d[1])) + float32(d[2]*d[2]))
	q.idd = float32(1) / dd
	q.t = float32(T)
	q.rf = ru32(2 * float64(s))
	q.rf2 = ru32(float64(q.rf) * float64(q.rf))
	return true
}

// radius is q32_radius: Rf = ru32(√best·(1 + 2^−20) + 2^−18·S), never
// above the initial 2S, and its rounded-up square.
func (q *q32) radius(best float64) {
	r := float64(float64(math.Sqrt(best)*(1+prune32Rel)) + float64(prune32Abs*float64(q.s)))
	q.rf = min(ru32(r), ru32(2*float64(q.s)))
	q.rf2 = ru32(float64(q.rf) * float64(q.rf))
}

// slab narrows [tn, tf] to the times at which the query is within Rf of the
// slab [a, b] (box sides relative to the origin) on axis k.
func (q *q32) slab(k int, a, b float32, tn, tf *float32) {
	if q.flat[k] {
		if a > q.rf || b < -q.rf {
			*tf = -1
		}
		return
	}
	t0 := float32(float32(a-q.rf) * q.inv[k])
	t1 := float32(float32(b+q.rf) * q.inv[k])
	*tn = geom.Fmaxf(*tn, geom.Fminf(t0, t1))
	*tf = geom.Fminf(*tf, geom.Fmaxf(t0, t1))
}

func clamp32(x, lo, hi float32) float32 { return geom.Fminf(geom.Fmaxf(x, lo), hi) }

func dot32(a, b [3]float32) float32 {
	return float32(float32(float32(a[0]*b[0])+float32(a[1]*b[1])) + float32(a[2]*b[2]))
}

// along is the point of the query nearest to x (relative to the origin),
// its time clamped to [tn, tf]: t·d.
func (q *q32) along(x [3]float32, tn, tf float32) [3]float32 {
	t := clamp32(float32(dot32(x, q.d)*q.idd), tn, tf)
	return [3]float32{float32(t * q.d[0]), float32(t * q.d[1]), float32(t * q.d[2])}
}

// unit scales n by edge_scale, the power of two that brings max|n_k| into
// [1, 2); false for n = 0 (the tests then return 0).
func unit(n *[3]float32) bool {
	m := geom.Fmaxf(geom.Fmaxf(abs32(n[0]), abs32(n[1])), abs32(n[2]))
	if !(m > 0) {
		return false
	}
	s := math.Float32frombits((254 - (math.Float32bits(m)>>23)&0xff) << 23)
	for k := range 3 {
		n[k] = float32(n[k] * s)
	}
	return true
}

// rcpNW is rcp_nw: 1/x from the bit-pattern estimate 0x7EF311C3 − bits(x)
// and steps Newton steps r·(2 − x·r), each operation rounded to float32.
func rcpNW(x float32, steps int) float32 {
	r := math.Float32frombits(0x7EF311C3 - math.Float32bits(x))
	for range steps {
		r = float32(r * float32(2-float32(x*r)))
	}
	return r
}

// sat is edge_sat: for the unit-scaled n and the support sup (n·c maximized
// over the other set), fl(fl(G²)·rcp_nw<2>(fl(|n|²))) with G = min over
// [tn, tf] of n·(t·d) − sup, or 0 when G ≤ 0.
func (q *q32) sat(n [3]float32, sup, tn, tf float32) float32 {
	nn := dot32(n, n)
	nd := dot32(n, q.d)
	g := float32(geom.Fminf(float32(tn*nd), float32(tf*nd)) - sup)
	if !(g > 0) {
		return 0
	}
	return float32(float32(g*g) * rcpNW(nn, 2))
}

// Bounds of the |e|² whose reciprocal the edge test's projection takes
// (EDGE32_IEE_LO, EDGE32_IEE_HI); outside them it takes 0.
const (
	prune32IEELo = 0x1p-100
	prune32IEEHi = 0x1p100
)

// box is q32_box: the test of the box [lo, hi] for the current radius. It
// returns v, which exceeds rf2 when the box is certainly farther than the
// radius (+Inf when the query misses the box grown by Rf), and the ordering
// key (an approximate squared distance, no bound).
func (q *q32) box(lo, hi [3]float32) (v, key float32) {
	var a, b, c [3]float32
	tn, tf := float32(0), q.t
	for k := range 3 {
		a[k] = float32(lo[k] - q.o[k])
		b[k] = float32(hi[k] - q.o[k])
		q.slab(k, a[k], b[k], &tn, &tf)
	}
	if tn > tf {
		return float32(math.Inf(1)), 0
	}
	for k := range 3 {
		c[k] = float32(float32(a[k]+b[k]) * 0.5)
	}
	var p [3]float32
	for range 2 {
		p = q.along(c, tn, tf)
		for k := range 3 {
			c[k] = clamp32(p[k], a[k], b[k])
		}
	}
	var n, v3 [3]float32
	for k := range 3 {
		n[k] = float32(p[k] - c[k])
	}
	key = dot32(n, n)
	if !unit(&n) {
		return 0, key
	}
	for k := range 3 {
		v3[k] = a[k]
		if n[k] >= 0 {
			v3[k] = b[k]
		}
	}
	return q.sat(n, dot32(n, v3), tn, tf), key
}

// edge is q32_edge: the result exceeds rf2 when the edge a→b is certainly
// farther than the current radius (+Inf when the query misses its box grown
// by Rf).
func (q *q32) edge(ea, eb [3]float32) float32 {
	var a, b, e, c [3]float32
	tn, tf := float32(0), q.t
	for k := range 3 {
		a[k] = float32(ea[k] - q.o[k])
		b[k] = float32(eb[k] - q.o[k])
		q.slab(k, geom.Fminf(a[k], b[k]), geom.Fmaxf(a[k], b[k]), &tn, &tf)
	}
	if tn > tf {
		return float32(math.Inf(1))
	}
	for k := range 3 {
		e[k] = float32(b[k] - a[k])
		c[k] = float32(float32(a[k]+b[k]) * 0.5)
	}
	ee := dot32(e, e)
	iee := float32(0)
	if ee >= prune32IEELo && ee <= prune32IEEHi {
		iee = rcpNW(ee, 1)
	}
	var p [3]float32
	for range 2 {
		p = q.along(c, tn, tf)
		var w [3]float32
		for k := range 3 {
			w[k] = float32(p[k] - a[k])
		}
		s := clamp32(float32(dot32(w, e)*iee), 0, 1)
		for k := range 3 {
			c[k] = float32(a[k] + float32(s*e[k]))
		}
	}
	var n [3]float32
	for k := range 3 {
		n[k] = float32(p[k] - c[k])
	}
	if !unit(&n) {
		return 0
	}
	sup := geom.Fmaxf(dot32(n, a), dot32(n, b))
	return q.sat(n, sup, tn, tf)
}
