package geom

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA is x*y+z computed exactly and rounded once to float32.
func exactFMA(x, y, z float32) float32 {
	const prec = 1200
	bx := new(big.Float).SetPrec(prec).SetFloat64(float64(x))
	by := new(big.Float).SetPrec(prec).SetFloat64(float64(y))
	bz := new(big.Float).SetPrec(prec).SetFloat64(float64(z))
	r := new(big.Float).SetPrec(prec).Mul(bx, by)
	r.Add(r, bz)
	f, _ := r.Float32()
	if r.Sign() == 0 {
		// IEEE: an exact zero sum is +0 unless both addends are -0.
		return float32(float64(x)*float64(y) + float64(z))
	}
	return f
}

func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

func randFloat32(r *rand.Rand) float32 {
	switch r.IntN(4) {
	case 0: // any finite bit pattern
		for {
			f := math.Float32frombits(r.Uint32())
			if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
				return f
			}
		}
	case 1: // scene-like magnitudes
		return float32(r.NormFloat64() * 10)
	case 2: // subnormal or tiny
		return math.Float32frombits(r.Uint32N(1<<24) | uint32(r.IntN(2))<<31)
	default: // near one
		return float32(1 + r.NormFloat64()*1e-6)
	}
}

func TestFMA32MatchesExactRounding(t *testing.T) {
	r := newRand(t)
	check := func(x, y, z float32) {
		t.Helper()
		if got, want := FMA32(x, y, z), exactFMA(x, y, z); !sameBits(got, want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g (%#x), want %g (%#x)", x, y, z,
				got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 100000 {
		x, y, z := randFloat32(r), randFloat32(r), randFloat32(r)
		check(x, y, z)
		// Cancellation: z close to -x*y.
		check(x, y, -float32(x*y))
		check(x, y, math.Nextafter32(-float32(x*y), 0))
	}
}

func TestFMA32DoubleRoundingCases(t *testing.T) {
	one := float32(1)
	ulp := float32(0x1p-23)
	cases := []struct {
		x, y, z, want float32
	}{
		// 1 + 2^-24 + 2^-70: just above the midpoint of [1, 1+2^-23]. A float64
		// FMA rounds it to the midpoint and the float32 tie would go to 1.
		{-0x1p-24 * (1 + 0x1p-23), 1 - 0x1p-23, one + ulp, one + ulp},
		// 1 + 2^-24 - 2^-70: just below the midpoint.
		{0x1p-24 * (1 + 0x1p-23), 1 - 0x1p-23, one, one},
		// Exact midpoint: ties to even.
		{0x1p-12, 0x1p-12, one, one},
		{0x1p-12, 0x1p-12, one + ulp, one + 2*ulp},
		// Overflow boundary: MaxFloat32 + 2^103 - tiny stays finite.
		{-0x1p-30 * (1 + 0x1p-23), 0x1p-30 * (1 - 0x1p-23), math.MaxFloat32, math.MaxFloat32},
		{math.MaxFloat32, 2, 0, float32(math.Inf(1))},
		{float32(math.Inf(1)), 0, 1, float32(math.NaN())},
	}
	for _, c := range cases {
		got := FMA32(c.x, c.y, c.z)
		if !sameBits(got, c.want) {
			t.Errorf("FMA32(%g, %g, %g) = %g, want %g", c.x, c.y, c.z, got, c.want)
		}
		if !math.IsNaN(float64(c.want)) && !math.IsInf(float64(c.want), 0) {
			if ex := exactFMA(c.x, c.y, c.z); !sameBits(ex, c.want) {
				t.Errorf("table entry (%g, %g, %g): exact %g, table %g", c.x, c.y, c.z, ex, c.want)
			}
		}
	}
}

func TestDiffOfProductsAccuracy(t *testing.T) {
	r := newRand(t)
	for range 50000 {
		a, b := float32(r.NormFloat64()), float32(r.NormFloat64())
		c := float32(r.NormFloat64())
		d := float32(float64(a) * float64(b) / float64(c) * (1 + r.NormFloat64()*1e-5))
		got := float64(DiffOfProducts(a, b, c, d))
		exact := float64(a)*float64(b) - float64(c)*float64(d) // exact products, one rounding
		ulp := float64(math.Nextafter32(float32(math.Abs(exact)), float32(math.Inf(1)))) - math.Abs(float64(float32(exact)))
		if ulp == 0 || math.IsInf(ulp, 0) {
			continue
		}
		if err := math.Abs(got - exact); err > 1.5*ulp {
			t.Fatalf("DiffOfProducts(%g,%g,%g,%g) = %g, exact %g: error %.3g ulp", a, b, c, d, got, exact, err/ulp)
		}
	}
}

func TestDiffOfProductsSequence(t *testing.T) {
	r := newRand(t)
	for range 10000 {
		a, b, c, d := randFloat32(r), randFloat32(r), randFloat32(r), randFloat32(r)
		w := float32(c * d)
		e := exactFMA(-c, d, w)
		f := exactFMA(a, b, -w)
		if got, want := DiffOfProducts(a, b, c, d), float32(f+e); !sameBits(got, want) {
			t.Fatalf("DiffOfProducts(%g,%g,%g,%g) = %g, want %g", a, b, c, d, got, want)
		}
	}
}

// TestFMA32RandomMidpoints builds x*y+z whose float64 rounding lands exactly
// on a float32 midpoint while the exact value lies just off it.
func TestFMA32RandomMidpoints(t *testing.T) {
	r := newRand(t)
	for range 20000 {
		e := r.IntN(200) - 100
		z := float32(math.Ldexp(1+float64(r.Uint32N(1<<23))*0x1p-23, e))
		k := float64(1 + r.IntN(1000))
		s1, s2 := float64(1-2*r.IntN(2)), float64(1-2*r.IntN(2))
		// x*y = s1*2^(e-24) * (1 - s2²k²2^-46): half an ulp of z, minus a sliver.
		x := float32(s1 * math.Ldexp(1+s2*k*0x1p-23, e-24))
		y := float32(1 - s2*k*0x1p-23)
		if got, want := FMA32(x, y, z), exactFMA(x, y, z); !sameBits(got, want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g, want %g", x, y, z, got, want)
		}
	}
}
