package rf

import (
	"math"
	"math/cmplx"
)

// Special functions of the UTD wedge operator, in float64. They are derived
// from the definitions below (not from any polynomial fit), so they are
// accurate to a few ulp where the device uses Boersma's 12-term
// approximation (absolute error ~1e-9).

// tailIntegral is G(z) = ∫_z^∞ e^{−iτ²} dτ for z ≥ 0.
//
// For z² ≤ 6 it is G(0) − Σ_{n≥0} (−i)ⁿ z^{2n+1}/(n!(2n+1)) with
// G(0) = √(π/8)(1 − i). Beyond, rotating the contour by π/4 turns it into
// e^{−iπ/4}(√π/2)·erfc(w), w = e^{iπ/4}z, and erfc(w) = e^{−w²}/√π·K(w) with
// the continued fraction K(w) = 1/(w + ½/(w + 1/(w + (3/2)/(w + …)))), so
// G = ½·e^{−iπ/4}·e^{−iz²}·K(w).
func tailIntegral(z float64) complex128 {
	if z*z <= 6 {
		return complex(math.Sqrt(math.Pi/8), -math.Sqrt(math.Pi/8)) - headIntegral(z)
	}
	return 0.5 * cmplx.Exp(complex(0, -math.Pi/4-z*z)) * kellerCF(complex(z, 0)*cmplx.Exp(complex(0, math.Pi/4)))
}

// headIntegral is ∫_0^z e^{−iτ²} dτ by its power series.
func headIntegral(z float64) complex128 {
	z2 := z * z
	term := complex(z, 0) // (−i z²)ⁿ z / n!
	sum := term
	for n := 1; n < 200; n++ {
		term *= complex(0, -z2) / complex(float64(n), 0)
		add := term / complex(float64(2*n+1), 0)
		sum += add
		if cmplx.Abs(add) < 1e-18*cmplx.Abs(sum) {
			break
		}
	}
	return sum
}

// kellerCF is K(w) = 1/(w + ½/(w + 1/(w + …))), the continued fraction of
// √π·e^{w²}·erfc(w), evaluated by the modified Lentz method.
func kellerCF(w complex128) complex128 {
	const tiny = 1e-300
	f := w
	c, d := f, complex128(0)
	for j := 1; j < 10000; j++ {
		a := complex(float64(j)/2, 0)
		d = w + a*d
		if d == 0 {
			d = tiny
		}
		d = 1 / d
		c = w + a/c
		if c == 0 {
			c = tiny
		}
		delta := c * d
		f *= delta
		if cmplx.Abs(delta-1) < 1e-16 {
			break
		}
	}
	return 1 / f
}

// transitionF is the UTD transition function of Kouyoumjian and Pathak,
//
//	F(X) = 2i√X e^{iX} ∫_{√X}^∞ e^{−iτ²} dτ,   X ≥ 0,
//
// with F(0) = 0 and F → 1 as X → ∞. Beyond the series range it is evaluated
// as e^{iπ/4}√X·K(e^{iπ/4}√X), which avoids the cancellation of the
// product form.
func transitionF(x float64) complex128 {
	if x <= 0 {
		return 0
	}
	z := math.Sqrt(x)
	if x <= 6 {
		return complex(0, 2*z) * expI(x) * tailIntegral(z)
	}
	r := cmplx.Exp(complex(0, math.Pi/4))
	return r * complex(z, 0) * kellerCF(r*complex(z, 0))
}

// fresnelE is the odd Fresnel integral
//
//	Fb(x) = sign(x)·∫_0^{|x|} e^{it}/√(2πt) dt = sign(x)·(C(u) + i S(u)),  u = √(2|x|/π),
//
// with C, S the normalized Fresnel integrals; Fb(±∞) = ±(1+i)/2. It is the
// function whose Boersma approximation the device evaluates, used by the
// finite-edge truncation.
func fresnelE(x float64) complex128 {
	ax := math.Abs(x)
	v := complex(0.5, 0.5) - complex(math.Sqrt(2/math.Pi), 0)*cmplx.Conj(tailIntegral(math.Sqrt(ax)))
	if x < 0 {
		return -v
	}
	return v
}
