package rf

import "math"

// The Kouyoumjian–Pathak diffraction coefficient, term by term.
//
// With β∓ = φ ∓ φ', each of the four terms is
//
//	cot((π + σ·β)/2n) · F(kL·a±(β)),   a±(β) = 2cos²((2nπN± − β)/2),
//
// where σ = +1 pairs with a⁺ and σ = −1 with a⁻, and N± is the integer
// nearest (β ± π)/(2nπ). The incident-boundary pair uses β⁻, the
// reflection-boundary pair β⁺. Multiplied by
//
//	−e^{−iπ/4} / (2n·√(2πk)·sin β0)
//
// (sin β0 omitted, and L = s s'/(s+s') without sin²β0, when neither face has
// a material: the 2D form), the incident pair gives D_i and the two
// reflection terms the coefficients of the 0-face (a⁻ term) and n-face (a⁺
// term) reflection operators.

// cotGuarded is cot(v) with sin v kept at least 1e-6 in magnitude; a
// non-finite result is 0.
func cotGuarded(v float64) float64 {
	s, c := math.Sincos(v)
	if math.Abs(s) < epsSmall {
		if s+epsSmall >= 0 {
			s = epsSmall
		} else {
			s = -epsSmall
		}
	}
	r := c / s
	if !finite(r) {
		return 0
	}
	return r
}

// kpTerm is one cot·F term. At the shadow or reflection boundary itself
// (a ≤ 8e-12·max(n², 1)) the product 0·∞ is replaced by its limit
// ±n√(πkL)(1+i), blended linearly into the raw value as a grows; the sign is
// σ·sign(sin(2nπN − β)) (the side of the boundary), or sign(cot) exactly on
// it.
func kpTerm(beta, n, kL, sigma float64, plus bool) complex128 {
	twoNPi := 2 * n * math.Pi
	var N float64
	if plus {
		N = math.Round((beta + math.Pi) / twoNPi)
	} else {
		N = math.Round((beta - math.Pi) / twoNPi)
	}
	po := twoNPi*N - beta
	ch := math.Cos(0.5 * po)
	a := 2 * ch * ch
	cot := cotGuarded((math.Pi + sigma*beta) / (2 * n))
	raw := transitionF(kL*a) * complex(cot, 0)
	if !(math.Abs(kL) > utdEps) {
		return raw
	}
	thr := 8e-12 * math.Max(n*n, 1)
	if a > thr {
		return raw
	}
	a1 := math.Sin(po)
	sign := 1.0
	if math.Abs(a1) > epsSmall {
		if a1 < 0 {
			sign = -sigma
		} else {
			sign = sigma
		}
	} else if cot < 0 {
		sign = -1
	}
	l := sign * n * math.Sqrt(math.Pi*math.Max(kL, 0))
	limit := complex(l, l)
	blend := math.Min(1, a/math.Max(thr, 1e-20))
	return limit + (raw-limit)*complex(blend, 0)
}

// mendTerm splits a boundary term t(β) about its nearest GO boundary b into
// an odd part (the GO step) and an even part (the smooth background):
//
//	w = exp(−(δ/δw)²), δ = β − b, δw = 4√(2π/kL); odd = ½w(t(β) − t(2b − β)); even = t − odd
//	result = even·T + odd·γ·(wb + (1 − wb)·T),  wb = exp(−(δ/δb)²), δb = 0.35√(2π/kL)
//
// so the finite-edge truncation T damps the smooth part everywhere and the
// step part only away from the boundary, while γ removes the step once the
// stationary point has left the edge. γ = T = 1 returns t unchanged.
func mendTerm(t complex128, beta, b, n, kL, sigma float64, plus bool, gamma, trunc float64) complex128 {
	if gamma >= 1 && trunc == 1 {
		return t
	}
	delta := beta - b
	dw := 4 * math.Sqrt(2*math.Pi/math.Max(kL, epsSmall))
	w := math.Exp(-sq(delta / dw))
	if !(w > 1e-3) {
		return t * complex(trunc, 0)
	}
	odd := (t - kpTerm(2*b-beta, n, kL, sigma, plus)) * complex(0.5*w, 0)
	even := t - odd
	db := 0.35 * math.Sqrt(2*math.Pi/math.Max(kL, epsSmall))
	wb := math.Exp(-sq(delta / db))
	return even*complex(trunc, 0) + odd*complex(gamma*(wb+(1-wb)*trunc), 0)
}

// kpTerms returns the incident coefficient D_i and the 0-face and n-face
// reflection coefficients of the KP coefficient (3D form when oblique is
// set), each including the common factor, with the finite-edge mending of
// mendTerm.
func kpTerms(phi, phiP, n, k, s, sP, sinB float64, oblique bool, gamma, trunc float64) (dInc, d0, d1 complex128) {
	L := s * sP / (s + sP + utdEps)
	factor := -1 / (2 * n * math.Sqrt(2*math.Pi*k+utdEps))
	if oblique {
		sb := math.Max(sinB, epsSmall)
		L *= sb * sb
		factor /= sb
	}
	kL := k * L
	f := expI(-math.Pi/4) * complex(factor, 0)
	bm, bp := phi-phiP, phi+phiP
	bInc := -math.Pi
	if math.Abs(bm-math.Pi) <= math.Abs(bm+math.Pi) {
		bInc = math.Pi
	}
	bRef := (2*n - 1) * math.Pi
	if math.Abs(bp-math.Pi) <= math.Abs(bp-bRef) {
		bRef = math.Pi
	}
	t0 := mendTerm(kpTerm(bm, n, kL, 1, true), bm, bInc, n, kL, 1, true, gamma, trunc)
	t1 := mendTerm(kpTerm(bm, n, kL, -1, false), bm, bInc, n, kL, -1, false, gamma, trunc)
	t2 := mendTerm(kpTerm(bp, n, kL, 1, true), bp, bRef, n, kL, 1, true, gamma, trunc)
	t3 := mendTerm(kpTerm(bp, n, kL, -1, false), bp, bRef, n, kL, -1, false, gamma, trunc)
	return f * (t0 + t1), f * t3, f * t2
}
