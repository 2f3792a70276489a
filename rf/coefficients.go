package rf

import "math"

// fresnelCoefficients are the TE and TM reflection coefficients of spec
// §7.1 for a face of relative permittivity eta_r, conductivity sigma and
// permeability mu_r at angular frequency omega and incidence cosine cosθ:
//
//	η = max(eta_r,1e-6) − i·max(σ,0)/(ω ε0), μ = max(mu_r,1e-6), c = clamp(|cosθ|,1e-6,1)
//	root = √(μη − (1 − c²))  (principal branch)
//	r_te = gain(μc − root)/(μc + root), r_tm = gain(ηc − root)/(ηc + root)
//
// A non-finite coefficient is 0.
func fresnelCoefficients(etaR, sigma, muR, gain, omega, cosTheta float64) (complex128, complex128) {
	eta := complex(math.Max(etaR, epsSmall), -math.Max(sigma, 0)/(math.Max(omega, epsSmall)*VacuumPermittivity))
	mu := complex(math.Max(muR, epsSmall), 0)
	ct := math.Min(math.Max(math.Abs(cosTheta), epsSmall), 1)
	root := csqrt(mu*eta - complex(math.Max(0, 1-ct*ct), 0))
	muC := mu * complex(ct, 0)
	etaC := eta * complex(ct, 0)
	g := complex(gain, 0)
	rte := g * cdiv(muC-root, muC+root, 1e-20)
	rtm := g * cdiv(etaC-root, etaC+root, 1e-20)
	if !finite(real(rte)) || !finite(imag(rte)) {
		rte = 0
	}
	if !finite(real(rtm)) || !finite(imag(rtm)) {
		rtm = 0
	}
	return rte, rtm
}

// csqrt is the principal complex square root (zero at zero).
func csqrt(z complex128) complex128 {
	r := math.Hypot(real(z), imag(z))
	if r <= 0 {
		return 0
	}
	re := math.Sqrt(math.Max(0, 0.5*(r+real(z))))
	im := math.Copysign(math.Sqrt(math.Max(0, 0.5*(r-real(z)))), imag(z))
	return complex(re, im)
}

// cdiv is a/b with |b|² floored at floor.
func cdiv(a, b complex128, floor float64) complex128 {
	den := math.Max(real(b)*real(b)+imag(b)*imag(b), floor)
	return complex((real(a)*real(b)+imag(a)*imag(b))/den, (imag(a)*real(b)-real(a)*imag(b))/den)
}
