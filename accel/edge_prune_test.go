package accel

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/internal/testscene"
)

var prunePairs = flag.Int("edge.prune-pairs", 0, "pairs per scale of TestPruneTestsKeepEveryCandidate (0: the default)")

// prunePair is one (query, edge) pair of the float32 test checks.
type prunePair struct {
	o, d, a, b [3]float32
	tmax       float32 // +Inf: a half ray
}

// f32 rounds to float32.
func f32(x float64) float32 { return float32(x) }

// randDir32 draws a direction: Gaussian, axis-aligned (exact zeros), one
// component tiny next to the others, tiny or huge overall (some outside the
// float32 tests' range), or exactly along v.
func randDir32(r *rand.Rand, v [3]float64) [3]float32 {
	var d [3]float32
	for k := range 3 {
		d[k] = f32(r.NormFloat64())
	}
	switch r.IntN(9) {
	case 0: // axis-aligned
		d = [3]float32{}
		d[r.IntN(3)] = f32(r.NormFloat64())
	case 1: // in a coordinate plane
		d[r.IntN(3)] = 0
	case 2: // one component tiny
		d[r.IntN(3)] = f32(r.NormFloat64() * 1e-9)
	case 3: // scaled down or up, 2^-50 .. 2^50
		s := math.Ldexp(1, r.IntN(101)-50)
		for k := range 3 {
			d[k] = f32(float64(d[k]) * s)
		}
	case 4, 5: // along v (through a chosen point), possibly scaled
		s := math.Ldexp(1, r.IntN(9)-4)
		for k := range 3 {
			d[k] = f32(v[k] * s)
		}
	}
	return d
}

// randRange32 draws a range: +Inf, 0, ±tiny, huge, or up to a few times
// the distance to the chosen point (t = 1 reaches it when d is along v).
func randRange32(r *rand.Rand) float32 {
	switch r.IntN(8) {
	case 0, 1:
		return float32(math.Inf(1))
	case 2:
		return 0
	case 3:
		return f32(math.Ldexp(1, -r.IntN(60)))
	case 4:
		return f32(math.Ldexp(1, r.IntN(60)))
	case 5:
		return 1
	}
	return f32(r.Float64() * 3)
}

// adversarialPair draws a pair around center c at size s: edges random,
// degenerate (a point, or endpoints one ulp apart), axis-aligned; queries
// from random origins or from a point on the edge, aimed at an endpoint, at
// an interior point, along the edge (collinear and parallel), grazing it,
// or anywhere.
func adversarialPair(r *rand.Rand, c, s float64) prunePair {
	p := func() [3]float32 {
		return [3]float32{f32(c + (r.Float64()*2-1)*s), f32(c + (r.Float64()*2-1)*s), f32(c + (r.Float64()*2-1)*s)}
	}
	var q prunePair
	q.a, q.b = p(), p()
	switch r.IntN(6) {
	case 0: // a point
		q.b = q.a
	case 1: // one ulp long
		q.b = q.a
		k := r.IntN(3)
		q.b[k] = math.Nextafter32(q.a[k], float32(math.Inf(1)))
	case 2: // axis-aligned
		k := r.IntN(3)
		q.b = q.a
		q.b[k] = f32(float64(q.a[k]) + (r.Float64()*2-1)*s)
	case 3: // short
		for k := range 3 {
			q.b[k] = f32(float64(q.a[k]) + (r.Float64()*2-1)*s*1e-4)
		}
	}
	q.o = p()
	e := [3]float64{float64(q.b[0] - q.a[0]), float64(q.b[1] - q.a[1]), float64(q.b[2] - q.a[2])}
	u := r.Float64()
	var target [3]float64
	for k := range 3 {
		target[k] = float64(q.a[k]) + u*e[k]
	}
	switch r.IntN(7) {
	case 0: // origin on the edge
		for k := range 3 {
			q.o[k] = f32(target[k])
		}
		u = r.Float64()
		for k := range 3 {
			target[k] = float64(q.a[k]) + u*e[k]
		}
	case 1: // aim at an endpoint
		target = [3]float64{float64(q.a[0]), float64(q.a[1]), float64(q.a[2])}
	case 2: // collinear or parallel: origin on the edge's line, a few ulps off it
		for k := range 3 {
			off := float64(q.a[k]) + (r.Float64()*3-1)*e[k]
			q.o[k] = f32(off)
			if r.IntN(2) == 0 {
				q.o[k] = math.Nextafter32(q.o[k], float32(math.Inf(1)))
			}
			target[k] = off + e[k]
		}
	case 3: // grazing: aim past the edge's end by a tiny amount
		for k := range 3 {
			target[k] = float64(q.b[k]) + (r.Float64()*2-1)*s*1e-7
		}
	}
	var v [3]float64
	for k := range 3 {
		v[k] = target[k] - float64(q.o[k])
	}
	q.d = randDir32(r, v)
	q.tmax = randRange32(r)
	return q
}

// rayRange is ray_setup's range: max(tmax, 0), +Inf kept.
func rayRange(tmax float32) float64 {
	if math.IsInf(float64(tmax), 1) {
		return math.Inf(1)
	}
	return max(float64(tmax), 0)
}

// boxesAround are boxes holding the edge: its own box, its box inflated as
// the build inflates stored boxes, and boxes grown by random amounts (some
// much larger than the edge), as node boxes are.
func boxesAround(r *rand.Rand, a, b [3]float32, s float64) [][2][3]float32 {
	var lo, hi [3]float32
	for k := range 3 {
		lo[k], hi[k] = min(a[k], b[k]), max(a[k], b[k])
	}
	box := [6]float32{lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]}
	ilo, ihi := inflate(&box)
	out := [][2][3]float32{{lo, hi}, {ilo, ihi}}
	for range 3 {
		var glo, ghi [3]float32
		g := s * math.Ldexp(1, -r.IntN(30))
		for k := range 3 {
			glo[k] = f32(float64(lo[k]) - r.Float64()*g)
			ghi[k] = f32(float64(hi[k]) + r.Float64()*g)
			glo[k] = min(glo[k], lo[k])
			ghi[k] = max(ghi[k], hi[k])
		}
		out = append(out, [2][3]float32{glo, ghi})
	}
	return out
}

// pruneScales are the centers and sizes of the checks: unit, small, large
// (up to the tests' range and beyond it), and far from the origin compared
// with their size (coordinates large, distances small).
var pruneScales = []struct {
	name string
	c, s float64
}{{"unit", 0, 1}, {"small", 0, 1e-6}, {"tiny", 0, 1e-12}, {"large", 0, 1e5}, {"range", 0, 4e6},
	{"beyond", 0, 1e8}, {"offset", 1e4, 1e-2}, {"far", 3e6, 1}}

// inPruneRange is the range of the float32 tests, written out: S =
// ru32(2B + |o|∞) in [2^−40, 2^24], every d_k 0 or of magnitude in
// [2^−40, 2^40], d ≠ 0.
func inPruneRange(o, d [3]float32, B float64) bool {
	S := ru32(2*B + max(math.Abs(float64(o[0])), math.Abs(float64(o[1])), math.Abs(float64(o[2]))))
	if S < 0x1p-40 || S > 0x1p24 || d == [3]float32{} {
		return false
	}
	for _, x := range d {
		if a := math.Abs(float64(x)); a != 0 && (a < 0x1p-40 || a > 0x1p40) {
			return false
		}
	}
	return true
}

// TestPruneTestsKeepEveryCandidate: for adversarial (query, edge) pairs at
// every scale, with the best equal to the edge's own float64 squared
// distance (the tightest case, a tie), the edge test and the test of every
// box holding the edge keep it, at the radius before any best and at the
// best's radius, and a test value computed at the first radius still passes
// the second (a stack entry re-tested on pop). Outside the tests' range the
// setup refuses the row.
func TestPruneTestsKeepEveryCandidate(t *testing.T) {
	pairs := 40000
	if testing.Short() {
		pairs = 8000
	}
	if *prunePairs > 0 {
		pairs = *prunePairs
	}
	seed := testscene.Seed(t)
	for _, sc := range pruneScales {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(len(sc.name))))
			checked, refused := 0, 0
			for range pairs {
				p := adversarialPair(r, sc.c, sc.s)
				T := rayRange(p.tmax)
				boxes := boxesAround(r, p.a, p.b, sc.s)
				B := 0.0 // as the root's child boxes: a bound of every box
				for _, bx := range boxes {
					for k := range 3 {
						B = max(B, math.Abs(float64(bx[0][k])), math.Abs(float64(bx[1][k])))
					}
				}
				var q q32
				ok := q.setup(p.o, p.d, T, B)
				require.Equal(t, inPruneRange(p.o, p.d, B), ok, "setup of %+v", p)
				if !ok {
					refused++
					continue
				}
				checked++
				_, _, dc := edge.RaySegment(f64(p.o), f64(p.d), T, f64(p.a), f64(p.b))
				first := make([]float32, len(boxes))
				require.False(t, q.edge(p.a, p.b) > q.rf2, "edge dropped before any best: %+v", p)
				for j, bx := range boxes {
					first[j], _ = q.box(bx[0], bx[1])
					require.False(t, first[j] > q.rf2, "box %d dropped before any best: %+v", j, p)
				}
				q.radius(dc)
				require.False(t, q.edge(p.a, p.b) > q.rf2, "edge dropped at its own distance %g: %+v", dc, p)
				for j, bx := range boxes {
					v, _ := q.box(bx[0], bx[1])
					require.False(t, v > q.rf2, "box %d dropped at distance %g: %+v", j, dc, p)
					require.False(t, first[j] > q.rf2, "box %d's first value %g dropped on re-test at %g: %+v", j, first[j], dc, p)
				}
			}
			if sc.name != "beyond" {
				assert.Greater(t, checked, pairs/2, "most pairs are in the tests' range")
			}
			t.Logf("%s: %d pairs checked, %d refused", sc.name, checked, refused)
		})
	}
}

// TestPruneTestsPruneAndNeedTheirMargins: the tests are not vacuous, and the
// margins matter. For pairs at unit scale, with a best a quarter of the
// edge's squared distance, the edge test drops most edges; and with the
// radius set to the bare √dc (no margin) some adversarial pair loses its
// edge, which the margin prevents.
func TestPruneTestsPruneAndNeedTheirMargins(t *testing.T) {
	r := rand.New(rand.NewPCG(testscene.Seed(t), 99))
	dropped, far, lost := 0, 0, 0
	for _, sc := range []struct{ c, s float64 }{{0, 1}, {1e4, 1e-2}, {3e6, 1}} {
		for range 20000 {
			p := adversarialPair(r, sc.c, sc.s)
			T := rayRange(p.tmax)
			var q q32
			if !q.setup(p.o, p.d, T, 2*(math.Abs(sc.c)+sc.s)) {
				continue
			}
			_, _, dc := edge.RaySegment(f64(p.o), f64(p.d), T, f64(p.a), f64(p.b))
			if dc > 1e-6*sc.s*sc.s && sc.c == 0 {
				far++
				q.radius(dc / 4)
				if q.edge(p.a, p.b) > q.rf2 {
					dropped++
				}
			}
			bare := ru32(math.Sqrt(dc))
			q.rf, q.rf2 = bare, ru32(float64(bare)*float64(bare))
			if q.edge(p.a, p.b) > q.rf2 {
				lost++
			}
		}
	}
	t.Logf("best dc/4: %d of %d edges dropped; bare radius: %d edges lost", dropped, far, lost)
	assert.Greater(t, dropped, far*3/4, "the edge test drops most edges twice as far as the best")
	assert.Positive(t, lost, "without the margin some edge at the best's distance is dropped")
}

// The reciprocal of the separating-axis quotient (rcp_nw<2>) exceeds 1/x
// by at most 2.4u and falls short by at most 6.7·10^−6 for every float32 x
// in [1, 2), which covers every normal x: scaling x by 2 scales the
// bit-pattern estimate and every Newton step's r by 1/2 exactly. The
// one-step reciprocal of the edge projection is finite and within 0.26%.
func TestRcpNWBounds(t *testing.T) {
	const u = 0x1p-24
	lo0, hi0, lo1, hi1, lo2, hi2 := 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
	for b := math.Float32bits(1); b < math.Float32bits(2); b++ {
		x := math.Float32frombits(b)
		e0 := float64(x)*float64(rcpNW(x, 0)) - 1
		e1 := float64(x)*float64(rcpNW(x, 1)) - 1
		e2 := float64(x)*float64(rcpNW(x, 2)) - 1
		lo0, hi0, lo1, hi1, lo2, hi2 = min(lo0, e0), max(hi0, e0), min(lo1, e1), max(hi1, e1), min(lo2, e2), max(hi2, e2)
	}
	assert.Less(t, hi2, 2.4*u, "rcp_nw<2> excess")
	assert.Greater(t, lo2, -6.7e-6, "rcp_nw<2> shortfall")
	assert.Less(t, max(-lo1, hi1), 0.0026, "rcp_nw<1>")
	assert.Less(t, max(-lo0, hi0), 0.12, "the bit-pattern estimate")
	assert.Greater(t, hi2, 2*u, "the 2.4u bound is tight enough to be the one measured")
	r := rand.New(rand.NewPCG(7, 11))
	for range 100000 {
		x := math.Float32frombits(math.Float32bits(1) + uint32(r.IntN(1<<23)))
		k := r.IntN(201) - 100 // x·2^k within [2^−100, 2^101)
		xs := float32(math.Ldexp(float64(x), k))
		for steps := range 3 {
			require.Equal(t, math.Ldexp(float64(rcpNW(x, steps)), -k), float64(rcpNW(xs, steps)), "x %g, k %d, steps %d", x, k, steps)
		}
	}
	for _, x := range []float32{prune32IEELo, prune32IEEHi, 1, 12} {
		v := rcpNW(x, 1)
		assert.True(t, v > 0 && !math.IsInf(float64(v), 0), "rcp_nw<1>(%g) = %g", x, v)
	}
}
