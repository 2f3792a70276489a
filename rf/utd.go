package rf

import (
	"math"
	"math/cmplx"
)

// First-order UTD wedge operator (the field of one source–edge–receiver
// path), derived from the uniform theory of diffraction of Kouyoumjian and
// Pathak and matching the conventions of RayD's operator concept by concept:
//
//   - the edge is re-anchored at the stationary (Fermat) point of the pair;
//   - angles φ, φ' are measured in the plane normal to the edge from the
//     0-face direction t̂ = normalize(n0 × ê), turning towards n0's side, so
//     the exterior region is [0, nπ] with n = exterior_angle/π; the source
//     must lie outside the wedge and both legs must exceed 1e-4;
//   - polarization lives in edge-fixed Jones bases (û = ±normalize(k̂ × ê),
//     v̂ = k̂ × û) on the incident and the diffracted ray;
//   - the coefficient is the 3D KP coefficient with transition functions
//     F(kL a±), L = s s'/(s+s')·sin²β0; the incident-boundary pair acts as
//     −D_i·I, the reflection-boundary terms through the Fresnel reflection
//     operators of the two faces (prim0 → 0-face, prim1 → n-face);
//   - a finite edge damps the smooth part of each boundary term by a
//     monotone truncation factor and its GO-step part by a corner indicator;
//   - spreading √(s'/(s(s+s'))), phase e^{−iks}, and the incident spherical
//     wave e^{−iks'}/(2ks') polarized along the transmitter polarization made
//     transverse to the incident ray.

// utdEps is the additive guard the operator puts on lengths and
// denominators; utdMinDist is the smallest leg it evaluates.
const (
	utdEps     = 1e-10
	utdMinDist = 1e-4
)

// faceMat is the material of one wedge face; present is false when the
// state's prim has no valid material row.
type faceMat struct {
	present              bool
	eta, sigma, mu, gain float64
}

// utdInput is one source–edge pair of the operator.
type utdInput struct {
	src, edgePos, edgeDir vec3
	n0, nn                vec3
	wedgeN                float64
	lineMin, lineMax      float64
	face0, face1          faceMat
	k, omega              float64
	txPol                 vec3
}

// basis is an orthonormal ray basis (u, v transverse, k along the ray).
type basis struct{ u, v, k vec3 }

// jop is a 2×2 complex Jones operator [[m00, m01], [m10, m11]].
type jop [2][2]complex128

func (m jop) apply(x [2]complex128) [2]complex128 {
	return [2]complex128{m[0][0]*x[0] + m[0][1]*x[1], m[1][0]*x[0] + m[1][1]*x[1]}
}

func (m jop) scale(c complex128) jop {
	return jop{{m[0][0] * c, m[0][1] * c}, {m[1][0] * c, m[1][1] * c}}
}

func (m jop) add(o jop) jop {
	return jop{{m[0][0] + o[0][0], m[0][1] + o[0][1]}, {m[1][0] + o[1][0], m[1][1] + o[1][1]}}
}

// safeNormalize is v/(|v| + 1e-10) when |v| > 1e-6, else the same for fb.
func safeNormalize(v, fb vec3) vec3 {
	if n := v.norm(); n > epsSmall {
		return v.scale(1 / (n + utdEps))
	}
	return fb.scale(1 / (fb.norm() + utdEps))
}

// perpBasis is the component of preferred transverse to the unit ray, with
// the transverse part of +z (or +y for near-z rays) as fallback.
func perpBasis(ray, preferred vec3) vec3 {
	alt := fallbackAxis(ray)
	return safeNormalize(preferred.sub(ray.scale(preferred.dot(ray))), alt.sub(ray.scale(alt.dot(ray))))
}

// basisFrom builds the ray basis whose u is the transverse part of first.
func basisFrom(ray, first, fallback vec3) basis {
	k := safeNormalize(ray, vec3{0, 0, 1})
	u := safeNormalize(first.sub(k.scale(first.dot(k))), fallback)
	v := safeNormalize(k.cross(u), perpBasis(k, vec3{0, 1, 0}))
	return basis{u, v, k}
}

// edgeBasis is the edge-fixed basis of a ray: û = k̂ × ê (negated for the
// diffracted ray), v̂ = k̂ × û.
func edgeBasis(ray, edge vec3, outgoing bool) basis {
	k := safeNormalize(ray, vec3{0, 0, 1})
	e := safeNormalize(edge, vec3{0, 0, 1})
	phi := k.cross(e)
	if outgoing {
		phi = phi.neg()
	}
	return basisFrom(k, phi, perpBasis(k, e))
}

// rebase expresses op, acting from basis srcIn to srcOut, between dstIn and
// dstOut: column j maps the j-th unit of dstIn.
func rebase(op jop, srcIn, srcOut, dstIn, dstOut basis) jop {
	var m jop
	for j, d := range []vec3{dstIn.u, dstIn.v} {
		x := op.apply([2]complex128{complex(d.dot(srcIn.u), 0), complex(d.dot(srcIn.v), 0)})
		w := along(srcOut.u, x[0]).add(along(srcOut.v, x[1]))
		m[0][j], m[1][j] = w.dotReal(dstOut.u), w.dotReal(dstOut.v)
	}
	return m
}

// exteriorMask reports whether the direction from the edge lies outside the
// wedge: its part normal to the edge is not degenerate and lies on the
// outer side of at least one face plane.
func exteriorMask(dir, e, n0, nn vec3) bool {
	dp := dir.sub(e.scale(dir.dot(e)))
	return dp.norm() > epsSmall && (dp.dot(n0) >= -epsSmall || dp.dot(nn) >= -epsSmall)
}

// safeAcos is acos(clamp(v, −1, 1)) in atan2 form.
func safeAcos(v float64) float64 {
	c := math.Min(math.Max(v, -1), 1)
	return math.Atan2(math.Sqrt(math.Max(1-c*c, 0)), c)
}

// wedgeAngle is the angle in [0, 2π) of a unit direction d normal to the
// edge, from the 0-face direction t̂ towards the n0 side.
func wedgeAngle(d, t, n0 vec3) float64 {
	a := safeAcos(d.dot(t))
	if d.dot(n0) >= 0 {
		return a
	}
	return 2*math.Pi - a
}

// edgeGeometry returns φ (receiver), φ' (source), the leg lengths s, s' and
// sin β0 (the geometric mean of both legs' sines with the edge, floored).
func edgeGeometry(src, q, e, n0, tgt vec3) (phi, phiP, s, sP, sinB float64) {
	t := safeNormalize(n0.cross(e), vec3{0, 1, 0})
	in := q.sub(src)
	inP := in.sub(e.scale(in.dot(e)))
	sPproj := inP.norm() + utdEps
	phiP = wedgeAngle(inP.scale(-1/sPproj), t, n0)
	out := tgt.sub(q)
	outP := out.sub(e.scale(out.dot(e)))
	sproj := outP.norm() + utdEps
	phi = wedgeAngle(outP.scale(1/sproj), t, n0)
	sP = in.norm() + utdEps
	s = out.norm() + utdEps
	sbP := math.Min(math.Max(sPproj/sP, epsSmall), 1)
	sb := math.Min(math.Max(sproj/s, epsSmall), 1)
	return phi, phiP, s, sP, math.Sqrt(math.Max(sb*sbP, epsSmall))
}

// utdField is the diffracted field at tgt of one pair; zero when the pair
// is invalid (degenerate edge, source inside the wedge, a leg ≤ 1e-4).
func utdField(in utdInput, tgt vec3) cvec {
	e := safeNormalize(in.edgeDir, vec3{0, 0, 1})
	origin := in.edgePos.add(e.scale(in.lineMin))
	length := in.lineMax - in.lineMin
	p := StationaryParameter(in.src, tgt, origin, e)
	if !(length > epsSmall) || !finite(p) {
		return cvec{}
	}
	q := origin.add(e.scale(p))
	lo, hi := -p, length-p // edge extent about the stationary point
	if !exteriorMask(in.src.sub(q), e, in.n0, in.nn) {
		return cvec{}
	}
	phi, phiP, s, sP, sinB := edgeGeometry(in.src, q, e, in.n0, tgt)
	if !(sP > utdMinDist) || !(s > utdMinDist) {
		return cvec{}
	}
	inB := edgeBasis(q.sub(in.src), e, false)
	outB := edgeBasis(tgt.sub(q), e, true)
	trunc, gamma := finiteEdge(in.src, q, tgt, e, in.k, lo, hi)

	// Faces are finite: angles past the face planes take their grazing
	// value on the nearer boundary.
	npi := in.wedgeN * math.Pi
	wrap := func(a float64) float64 {
		if a <= npi {
			return a
		}
		if a-npi < 2*math.Pi-a {
			return npi
		}
		return 0
	}
	phi, phiP = wrap(phi), wrap(phiP)

	// Incident spherical wave at the diffraction point.
	dir := safeNormalize(q.sub(in.src), vec3{0, 0, 1})
	sInc := q.sub(in.src).norm() + utdEps
	inc := along(perpBasis(dir, in.txPol), expI(-in.k*sInc)*complex(1/(2*math.Max(in.k, epsSmall)*sInc), 0))
	incJ := [2]complex128{inc.dotReal(inB.u), inc.dotReal(inB.v)}

	useFace := in.face0.present || in.face1.present
	var op0, op1 jop
	if in.face0.present {
		op0 = faceOperator(in.face0, math.Min(math.Max(math.Abs(math.Sin(phiP)), epsSmall), 1), in.n0, inB, outB, in.omega)
	}
	if in.face1.present {
		op1 = faceOperator(in.face1, math.Min(math.Max(math.Abs(math.Sin(npi-phi)), epsSmall), 1), in.nn, inB, outB, in.omega)
	}
	dInc, d0, d1 := kpTerms(phi, phiP, in.wedgeN, in.k, s, sP, sinB, useFace, gamma, trunc)
	total := jop{{-dInc, 0}, {0, -dInc}}.add(op0.scale(d0)).add(op1.scale(d1))
	fj := total.apply(incJ)
	spread := math.Sqrt(sP / (s*(s+sP) + utdEps))
	return along(outB.u, fj[0]).add(along(outB.v, fj[1])).mul(expI(-in.k*s) * complex(spread, 0))
}

// faceOperator is the Fresnel reflection of one face as a Jones operator
// between the edge-fixed bases: diag(gain·r_TE, gain·r_TM) in the face's
// own (s, p) bases, cosθ being the grazing sine of the ray with the face.
func faceOperator(f faceMat, cosTheta float64, normal vec3, inB, outB basis, omega float64) jop {
	ct := math.Min(math.Max(cosTheta, epsSmall), 1)
	eta := complex(f.eta, -f.sigma/(math.Max(omega, epsSmall)*VacuumPermittivity))
	mu := complex(f.mu, 0)
	a := csqrt(mu*eta - complex(1-ct*ct, 0))
	div := func(x, y complex128) complex128 { return cdivEps(x, y) }
	g := complex(f.gain, 0)
	rte := g * div(mu*complex(ct, 0)-a, mu*complex(ct, 0)+a)
	rtm := g * div(eta*complex(ct, 0)-a, eta*complex(ct, 0)+a)
	sIn := normal.cross(inB.k)
	sOutRaw := normal.cross(outB.k)
	fbOut := perpBasis(outB.k, sIn)
	sOut := sOutRaw
	if sOutRaw.dot(fbOut) < 0 {
		sOut = sOutRaw.neg()
	}
	fIn := basisFrom(inB.k, sIn, perpBasis(inB.k, vec3{0, 0, 1}))
	fOut := basisFrom(outB.k, sOut, fbOut)
	return rebase(jop{{rte, 0}, {0, rtm}}, fIn, fOut, inB, outB)
}

// cdivEps is a/b with 1e-10 added to |b|².
func cdivEps(a, b complex128) complex128 {
	den := real(b)*real(b) + imag(b)*imag(b) + utdEps
	return complex((real(a)*real(b)+imag(a)*imag(b))/den, (imag(a)*real(b)-real(a)*imag(b))/den)
}

// finiteEdge returns the monotone truncation factor of the smooth part and
// the corner indicator γ of the GO-step part for an edge extending over
// [lo, hi] about the stationary point q. With σ = √(k·κ/π), κ the summed
// curvature of the two legs about q,
//
//	tail(x) = |½(1+i)·conj(Fb(∞) − Fb(x))|,  T = clamp(1 − tail(−σ lo) − tail(σ hi), 0, 1)
//	γ = 1/(1 + exp(clamp(max(σ lo, −σ hi)/0.03, −80, 80)))
//
// so T → 1 and γ → 1 deep inside a long edge, γ → 0 once the stationary
// point leaves the edge.
func finiteEdge(src, q, tgt, e vec3, k, lo, hi float64) (float64, float64) {
	sa := src.sub(q).dot(e)
	ta := tgt.sub(q).dot(e)
	perp := func(v vec3) float64 { return v.sub(e.scale(v.dot(e))).norm() + utdEps }
	sp, tp := perp(q.sub(src)), perp(tgt.sub(q))
	sr := math.Sqrt(sp*sp + sa*sa + utdEps)
	tr := math.Sqrt(tp*tp + ta*ta + utdEps)
	curv := sp*sp/(sr*sr*sr+utdEps) + tp*tp/(tr*tr*tr+utdEps)
	sigma := math.Sqrt(math.Max(k*curv, utdEps) / math.Pi)
	half := complex(0.5, 0.5)
	lower := cmplx.Abs(half * cmplx.Conj(fresnelE(sigma*lo)+half))
	upper := cmplx.Abs(half * cmplx.Conj(half-fresnelE(sigma*hi)))
	trunc := math.Min(math.Max(1-lower-upper, 0), 1)
	z := math.Min(math.Max(math.Max(sigma*lo, -sigma*hi)/0.03, -80), 80)
	return trunc, 1 / (1 + math.Exp(z))
}
