package edge

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"
)

// The GPU ray query prunes nodes and prefilters edges with a float32 test
// (ptx/src/edge_prune.cuh, mirrored in prune32_mirror_test.go); its results
// equal the brute force only if the test never rejects a box holding an
// edge whose float64 distance² is at most the current best. These tests
// check that on adversarial random cases and through whole traversals.

var (
	prune32Cases = flag.Int("prune32.cases", 0, "pairwise cases of TestPrune32NeverDropsACandidate (0: default)")
	prune32Rows  = flag.Int("prune32.rows", 0, "queries per scene of TestPrune32WalkEqualsScan and TestPrune32WarpEqualsScan (0: default)")
)

func f32(x float64) float64 { return float64(float32(x)) }

// scales are the coordinate magnitudes of the random cases: unit scenes,
// tiny and huge ones, offsets where the float32 spacing is coarse, and the
// edges of the box test's range (2^80) and of the sphere test's ([2^−40,
// 2^56]).
var scales = []float64{1, 1e-30, 1e-6, 1e4, 1e20, 0x1p79, 1e-36, 0x1p54, 0x1p-38}

// randDir draws a direction: Gaussian, axis-aligned (flat axes), with tiny
// or subnormal float32 components, zero, huge, or huge and tiny mixed.
func randDir(r *rand.Rand) vec {
	g := vec{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	switch r.IntN(9) {
	case 0:
		g[r.IntN(3)] = 0
	case 1:
		k := r.IntN(3)
		g = vec{}
		g[k] = r.NormFloat64()
	case 2:
		g[r.IntN(3)] *= 1e-30
	case 3:
		g[r.IntN(3)] = float64(math.SmallestNonzeroFloat32) * float64(1+r.IntN(1000))
	case 4:
		g = vec{}
	case 5:
		g = scale(g, 1e30)
	case 6:
		g[r.IntN(3)] *= 1e20
		g[r.IntN(3)] *= 1e-20
	case 7:
		g[r.IntN(3)] *= 1e-12 // just above or below the flat threshold after scaling
	}
	return vec{f32(g[0]), f32(g[1]), f32(g[2])}
}

// randRange draws T: a half ray, zero, a range reaching about the scene,
// tiny, huge, or exactly the float32 maximum.
func randRange(r *rand.Rand, s float64, d vec) float64 {
	dl := math.Sqrt(dot(d, d))
	switch r.IntN(7) {
	case 0, 1:
		return math.Inf(1)
	case 2:
		return 0
	case 3:
		return f32(1e-30 * r.Float64())
	case 4:
		return f32(1e38 * r.Float64())
	case 5:
		return math.MaxFloat32
	}
	if dl == 0 || math.IsInf(s/dl, 0) {
		return f32(r.Float64())
	}
	return f32(3 * s / dl * r.Float64())
}

// prune32Case is one query and one edge: o, d, T, a, b.
type prune32Case struct {
	o, d, a, b vec
	T          float64
}

// randCase draws a case at scale s: edges random, degenerate, axis-aligned,
// long or tiny; queries random, grazing the edge box (origin on a face
// plane, direction parallel to it), or lying along the edge.
func randCase(r *rand.Rand, s float64) prune32Case {
	u := func() float64 { return (r.Float64()*2 - 1) * s }
	pt := func() vec { return vec{f32(u()), f32(u()), f32(u())} }
	var c prune32Case
	c.a = pt()
	switch r.IntN(6) {
	case 0:
		c.b = c.a
	case 1:
		c.b = c.a
		k := r.IntN(3)
		c.b[k] = f32(c.a[k] + u())
	case 2:
		c.b = vec{f32(c.a[0] + u()*1e-6), f32(c.a[1] + u()*1e-6), f32(c.a[2] + u()*1e-6)}
	default:
		c.b = pt()
	}
	c.o, c.d = pt(), randDir(r)
	// off: an endpoint moved by δ along axis k (δ from a few ulps to s),
	// where the L∞ and L2 distances agree: the test's tightest case.
	off := func() (vec, int, float64) {
		k := r.IntN(3)
		dl := s * math.Pow(2, -60*r.Float64())
		if r.IntN(2) == 0 {
			dl = -dl
		}
		p := c.a
		p[k] = f32(p[k] + dl)
		return p, k, dl
	}
	switch r.IntN(7) {
	case 0: // on a face plane of the edge box, moving parallel to it
		k := r.IntN(3)
		c.o[k] = min(c.a[k], c.b[k])
		if r.IntN(2) == 0 {
			c.o[k] = max(c.a[k], c.b[k])
		}
		c.d[k] = 0
	case 1: // along the edge (collinear up to float32 rounding)
		c.o = vec{f32(c.a[0] - (c.b[0]-c.a[0])*r.Float64()), f32(c.a[1] - (c.b[1]-c.a[1])*r.Float64()),
			f32(c.a[2] - (c.b[2]-c.a[2])*r.Float64())}
		c.d = vec{f32(c.b[0] - c.a[0]), f32(c.b[1] - c.a[1]), f32(c.b[2] - c.a[2])}
	case 2: // origin on the edge
		w := r.Float64()
		c.o = vec{f32(c.a[0] + (c.b[0]-c.a[0])*w), f32(c.a[1] + (c.b[1]-c.a[1])*w), f32(c.a[2] + (c.b[2]-c.a[2])*w)}
	}
	c.T = randRange(r, s, c.d)
	switch r.IntN(6) {
	case 0: // the origin just off an endpoint, moving away from it on that axis
		var k int
		var dl float64
		c.o, k, dl = off()
		c.d[k] = math.Copysign(math.Max(math.Abs(c.d[k]), 1e-3), dl)
	case 1: // the end of a segment just off an endpoint, arriving from outside
		p, k, dl := off()
		c.d[k] = math.Copysign(math.Max(math.Abs(c.d[k]), 1e-3), -dl)
		c.T = f32(s * r.Float64())
		c.o = vec{f32(p[0] - c.T*c.d[0]), f32(p[1] - c.T*c.d[1]), f32(p[2] - c.T*c.d[2])}
	}
	return c
}

// grow widens the box by random float32 amounts (0 on some sides): a node
// box holding the edge.
func grow(r *rand.Rand, lo, hi [3]float32, s float64) ([3]float32, [3]float32) {
	for k := range 3 {
		if r.IntN(2) == 0 {
			lo[k] = float32(float64(lo[k]) - r.Float64()*s)
		}
		if r.IntN(2) == 0 {
			hi[k] = float32(float64(hi[k]) + r.Float64()*s)
		}
	}
	return lo, hi
}

func boxMax(lo, hi [3]float32) float64 {
	m := 0.0
	for k := range 3 {
		m = max(m, math.Abs(float64(lo[k])), math.Abs(float64(hi[k])))
	}
	return m
}

// TestPrune32NeverDropsACandidate: for random and adversarial (query, edge)
// pairs at every scale, with the best at the edge's float64 distance² (a
// tie), just above it, or well above it, the box test accepts the edge's
// box and every box holding it and the sphere test keeps the edge; and with
// the best well below the distance both reject most edges (they prune).
func TestPrune32NeverDropsACandidate(t *testing.T) {
	n := 400_000
	if testing.Short() {
		n = 100_000
	}
	if *prune32Cases > 0 {
		n = *prune32Cases
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 32))
	var tested, sphere, far, rejectedBox, rejectedSphere, outside int
	for range n {
		s := scales[r.IntN(len(scales))]
		c := randCase(r, s)
		_, _, dc := raySegment(c.o, c.d, c.T, c.a, c.b)
		if math.IsNaN(dc) {
			t.Fatalf("NaN distance for %+v", c)
		}
		lo, hi := edgeBox(c.a, c.b)
		glo, ghi := grow(r, lo, hi, s)
		B := boxMax(glo, ghi)
		if r.IntN(4) == 0 {
			B = f32(B * (1 + 8*r.Float64()))
		}
		q, ok := setup32(c.o, c.d, c.T, B)
		if !ok {
			outside++
			if absMax3(c.o) <= range32 && B <= range32 {
				t.Fatalf("setup refused an in-range query %+v (B %g)", c, B)
			}
			continue
		}
		tested++
		if q.flat&useSphere != 0 {
			sphere++
		}
		df := [3]float32{float32(c.d[0]), float32(c.d[1]), float32(c.d[2])}
		for _, best := range []float64{dc, math.Nextafter(dc, math.Inf(1)), dc * (1 + r.Float64()), math.Inf(1)} {
			qb := q
			qb.radius(best)
			if !qb.hit(lo, hi) || !qb.hit(glo, ghi) {
				t.Fatalf("best %g ≥ d² %g rejected the edge box %v %v or the box %v %v: %+v (B %g)",
					best, dc, lo, hi, glo, ghi, c, B)
			}
			if qb.far(df, float32(c.T), c.a, c.b) {
				t.Fatalf("best %g ≥ d² %g: the sphere test dropped the edge: %+v (B %g)", best, dc, c, B)
			}
		}
		if dc > 0 && !math.IsInf(dc, 1) && s == 1 {
			far++
			qb := q
			qb.radius(dc / 64)
			if !qb.hit(lo, hi) {
				rejectedBox++
			}
			if qb.far(df, float32(c.T), c.a, c.b) {
				rejectedSphere++
			}
		}
	}
	t.Logf("%d cases: %d tested (%d with the sphere test), %d outside the range; best = d²/64 rejected %d (box) "+
		"and %d (sphere) of %d unit-scale edges", n, tested, sphere, outside, rejectedBox, rejectedSphere, far)
	if tested < n/2 || outside == 0 || sphere < tested/4 || sphere == tested {
		t.Fatalf("the generator covers too little: %d tested, %d outside, %d sphere", tested, outside, sphere)
	}
	if rejectedBox < far/4 || rejectedSphere < far/4 {
		t.Fatalf("the tests prune too little: %d and %d of %d", rejectedBox, rejectedSphere, far)
	}
}

// TestPrune32Setup: the normalization is exact (flat axes, subnormal and
// huge directions), the range end rounds up, the margin follows B and |o|,
// and the inflation is capped for an infinite or huge best.
func TestPrune32Setup(t *testing.T) {
	q, ok := setup32(vec{1, -2, 3}, vec{0, 0x1p-140, -4}, 2, 5)
	if !ok || q.flat != 3|useSphere || q.iv[2] != -1 || q.iv[0] == q.iv[0] || q.tmax != 8 || q.inn != 1.0/16 {
		t.Fatalf("setup: %+v %v", q, ok)
	}
	if q.base != float64(rel32*8)+floor32 || q.l[0] != 1+cap32 || q.h[2] != 3-cap32 {
		t.Fatalf("margin or cap: %+v", q)
	}
	q.radius(0x1p300)
	if q.l[0] != 1+cap32 {
		t.Fatalf("huge best not capped: %v", q.l)
	}
	q.radius(4)
	if want := ru32(float64(2*(1+rel32)) + q.base); q.l[1] != -2+want || q.h[1] != -2-want ||
		q.rs != ru32(float64(want)+4*q.base) {
		t.Fatalf("radius 2: %v %v %v (Rm %v)", q.l, q.h, q.rs, want)
	}
	if _, ok := setup32(vec{0x1p81, 0, 0}, vec{1, 0, 0}, 1, 1); ok {
		t.Fatal("origin beyond 2^80 accepted")
	}
	if _, ok := setup32(vec{}, vec{1, 0, 0}, 1, 0x1p81); ok {
		t.Fatal("scene bound beyond 2^80 accepted")
	}
	if q, _ := setup32(vec{}, vec{}, math.Inf(1), 1); q.flat != 7 || q.tmax != 0 {
		t.Fatalf("zero direction: %+v", q)
	}
	for _, c := range []struct {
		o      vec
		d      vec
		B      float64
		sphere bool
	}{{vec{1, 0, 0}, vec{1, 0, 0}, 1, true}, {vec{}, vec{1, 0, 0}, 0x1p-41, false}, {vec{}, vec{1, 0, 0}, 0x1p57, false},
		{vec{}, vec{0x1p-57, 0, 0}, 1, false}, {vec{}, vec{0x1p57, 0, 0}, 1, false}, {vec{0x1p56, 0, 0}, vec{1, 0, 0}, 0, true}} {
		if q, _ := setup32(c.o, c.d, 1, c.B); (q.flat&useSphere != 0) != c.sphere {
			t.Fatalf("sphere test range: %+v gives %+v", c, q)
		}
	}
	if q, _ := setup32(vec{}, vec{}, math.Inf(1), 1); q.flat != 7 {
		t.Fatalf("zero direction: %+v", q)
	}
	if q, _ := setup32(vec{}, vec{float64(math.SmallestNonzeroFloat32), 0, 0}, math.MaxFloat32, 1); q.iv[0] != 1 ||
		q.tmax != float32(math.MaxFloat32*0x1p-149) {
		t.Fatalf("subnormal direction: %+v", q)
	}
	if q, _ := setup32(vec{}, vec{0, 0x1p100, 0}, math.MaxFloat32, 1); q.iv[1] != 1 || q.tmax != inf32 {
		t.Fatalf("huge direction: %+v", q)
	}
	if ru32(1+0x1p-30) != math.Nextafter32(1, 2) || ru32(1) != 1 || ru32(math.MaxFloat32*1.0000001) != inf32 {
		t.Fatal("ru32")
	}
}
