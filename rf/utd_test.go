package rf

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTransitionFunction(t *testing.T) {
	// Tabulated values of the KP transition function.
	f1 := transitionF(1)
	assert.InDelta(t, 0.8422, cmplx.Abs(f1), 1e-4)
	assert.InDelta(t, 16.00, cmplx.Phase(f1)*180/math.Pi, 0.01)
	assert.Equal(t, complex128(0), transitionF(0))
	// Small X: F ≈ √(πX)·e^{iπ/4}; large X: F ≈ 1 + i/(2X) − 3/(4X²).
	x := 1e-8
	assert.InDelta(t, 0, cmplx.Abs(transitionF(x)/(complex(math.Sqrt(math.Pi*x), 0)*expI(math.Pi/4))-1), 1e-3)
	x = 1e4
	assert.InDelta(t, 0, cmplx.Abs(transitionF(x)-complex(1-3/(4*x*x), 1/(2*x))), 1e-10)
	// Continuous across the switch from the series to the continued fraction.
	assert.InDelta(t, 0, cmplx.Abs(transitionF(6-1e-12)-transitionF(6+1e-12)), 1e-10)
}

func TestFresnelIntegral(t *testing.T) {
	// C(1) = 0.7798934004, S(1) = 0.4382591474 at u = √(2x/π) = 1.
	v := fresnelE(math.Pi / 2)
	assert.InDelta(t, 0.7798934004, real(v), 1e-9)
	assert.InDelta(t, 0.4382591474, imag(v), 1e-9)
	assert.Equal(t, -v, fresnelE(-math.Pi/2))
	assert.InDelta(t, 0, cmplx.Abs(fresnelE(1e8)-complex(0.5, 0.5)), 1e-4)
	assert.Equal(t, complex128(0), fresnelE(0))
}

// halfPlane is a screen occupying the half-plane y = 0, x > 0 (face 0 on
// its +y side), edge along z, seen from a source at azimuth φ' = 60°.
func halfPlane(pol vec3, face faceMat) (utdInput, vec3) {
	src := vec3{math.Cos(math.Pi / 3), math.Sin(math.Pi / 3), 0.3}.scale(2)
	return utdInput{src: src, edgeDir: vec3{0, 0, 1}, n0: vec3{0, 1, 0}, nn: vec3{0, -1, 0}, wedgeN: 2,
		lineMin: -50, lineMax: 50, k: 2 * math.Pi, omega: 2 * math.Pi * SpeedOfLight, txPol: pol,
		face0: face, face1: face}, src
}

func ring(phi float64) vec3 { return vec3{3 * math.Cos(phi), 3 * math.Sin(phi), -0.45} }

// Across the incident shadow boundary φ = φ' + π the diffracted field jumps
// by exactly the incident field, so incident + diffracted is continuous.
func TestUTDContinuousAcrossShadowBoundary(t *testing.T) {
	for _, pol := range []vec3{{0, 0, 1}, {1, 0, 0}} {
		in, src := halfPlane(pol, faceMat{})
		isb := math.Pi/3 + math.Pi
		const d = 1e-5
		jump := utdField(in, ring(isb+d)).sub(utdField(in, ring(isb-d)))
		rx := ring(isb)
		dist := rx.sub(src).norm()
		inc := along(perpBasis(rx.sub(src).normalize(), pol), expI(-in.k*dist)*complex(1/(2*in.k*dist), 0))
		require.Positive(t, inc.power())
		assert.Less(t, math.Sqrt(jump.sub(inc).power()), 1e-3*math.Sqrt(inc.power()), "polarization %v", pol)
	}
}

// Across the reflection boundary of a conducting face the jump is the
// Fresnel-reflected field of the image source.
func TestUTDContinuousAcrossReflectionBoundary(t *testing.T) {
	pec := faceMat{present: true, eta: 1, sigma: 1e9, mu: 1, gain: 1}
	for _, pol := range []vec3{{0, 0, 1}, {1, 0, 0}} {
		in, src := halfPlane(pol, pec)
		rsb := math.Pi - math.Pi/3
		const d = 1e-5
		jump := utdField(in, ring(rsb+d)).sub(utdField(in, ring(rsb-d)))
		rx := ring(rsb)
		img := vec3{src[0], -src[1], src[2]}
		dist := rx.sub(img).norm()
		hit := img.add(rx.sub(img).scale(img[1] / (img[1] - rx[1])))
		dir := hit.sub(src).normalize()
		inc := along(perpBasis(dir, pol), expI(-in.k*dist)*complex(1/(2*in.k*dist), 0))
		c := reflCall{mat: matView{n: 1, m: uniformMaterial(1, 1, 1e9)}, omega: in.omega}
		refl, _ := c.fresnelReflect(inc, dir, vec3{0, 1, 0}, 0)
		assert.Less(t, math.Sqrt(jump.sub(refl).power()), 1e-3*math.Sqrt(refl.power()), "polarization %v", pol)
	}
}

// Far from every boundary the transition functions tend to 1 and the
// coefficient of a half-plane tends to Keller's GTD coefficient
// −e^{−iπ/4}/(2√(2πk) sin β0)·sec(β/2).
func TestUTDHalfPlaneGTDLimit(t *testing.T) {
	k, s, sP, sinB := 2*math.Pi*100, 10.0, 10.0, 0.8
	for _, ang := range [][2]float64{{1.0, 0.5}, {2.2, 0.3}, {5.5, 1.1}, {4.6, 2.0}} {
		phi, phiP := ang[0], ang[1]
		dInc, d0, d1 := kpTerms(phi, phiP, 2, k, s, sP, sinB, true, 1, 1)
		gtd := func(beta float64) complex128 {
			return -expI(-math.Pi/4) / complex(2*math.Sqrt(2*math.Pi*k)*sinB*math.Cos(beta/2), 0)
		}
		assert.InDelta(t, 0, cmplx.Abs(dInc/gtd(phi-phiP)-1), 2e-3, "incident %v", ang)
		assert.InDelta(t, 0, cmplx.Abs((d0+d1)/gtd(phi+phiP)-1), 2e-3, "reflected %v", ang)
	}
}

func TestUTDReciprocity(t *testing.T) {
	// The coefficient is symmetric under exchanging source and receiver.
	for _, ang := range [][2]float64{{1.0, 0.5}, {4.1, 1.0}, {3.3, 2.2}} {
		a0, a1, a2 := kpTerms(ang[0], ang[1], 1.6, 7, 3, 5, 0.9, true, 1, 1)
		b0, b1, b2 := kpTerms(ang[1], ang[0], 1.6, 7, 5, 3, 0.9, true, 1, 1)
		assert.InDelta(t, 0, cmplx.Abs(a0-b0), 1e-12*cmplx.Abs(a0))
		assert.InDelta(t, 0, cmplx.Abs(a1-b1), 1e-12*cmplx.Abs(a1))
		assert.InDelta(t, 0, cmplx.Abs(a2-b2), 1e-12*cmplx.Abs(a2))
	}
	// Two z-polarized dipoles in the plane normal to the edge of a
	// conducting wedge: p_B·E_A(B) = p_A·E_B(A).
	pec := faceMat{present: true, eta: 1, sigma: 1e12, mu: 1, gain: 1}
	a, b := vec3{2, 1.5, 0}, vec3{-1.2, -2.5, 0}
	in := utdInput{edgeDir: vec3{0, 0, 1}, n0: vec3{0, 1, 0}, nn: vec3{0.6, -0.8, 0}, wedgeN: 1.7,
		lineMin: -40, lineMax: 40, k: 2 * math.Pi, omega: 2 * math.Pi * SpeedOfLight, txPol: vec3{0, 0, 1}, face0: pec, face1: pec}
	in.src = a
	eab := utdField(in, b)
	in.src = b
	eba := utdField(in, a)
	require.Positive(t, eab.power())
	assert.InDelta(t, 0, cmplx.Abs(eab[2]-eba[2]), 1e-4*cmplx.Abs(eab[2]))
}

func TestUTDInvalidPairs(t *testing.T) {
	in, _ := halfPlane(vec3{0, 0, 1}, faceMat{})
	in.wedgeN = 1.5 // a right-angle wedge filling φ ∈ (3π/2, 2π)
	in.n0, in.nn = vec3{0, 1, 0}, vec3{-1, 0, 0}
	in.src = vec3{1, -1, 0} // inside the wedge
	assert.Equal(t, cvec{}, utdField(in, ring(1)))
	in.src = vec3{-1, 1, 0}
	assert.Positive(t, utdField(in, ring(4)).power())
	assert.Equal(t, cvec{}, utdField(in, vec3{0, 0, 5})) // receiver on the edge line
	in.lineMax = in.lineMin
	assert.Equal(t, cvec{}, utdField(in, ring(4)))
}

// The finite-edge factors: a long edge leaves the coefficient nearly
// untouched, a stationary point past the edge end removes the GO step.
func TestFiniteEdgeFactors(t *testing.T) {
	src, tgt, e := vec3{0, -2, 1}, vec3{0, 3, -1}, vec3{1, 0, 0}
	trunc, gamma := finiteEdge(src, vec3{}, tgt, e, 2*math.Pi, -1e4, 1e4)
	assert.Greater(t, trunc, 0.99)
	assert.InDelta(t, 1, gamma, 1e-12)
	trunc, gamma = finiteEdge(src, vec3{}, tgt, e, 2*math.Pi, 0.5, 3)
	assert.Less(t, trunc, 0.5)
	assert.Less(t, gamma, 1e-6)
}
