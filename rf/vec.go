package rf

import "math"

// Constants of the operation contract (spec §0.1) and of the diffraction
// kernels, in float64.
const (
	// SpeedOfLight is c in m/s.
	SpeedOfLight = 299792458.0
	// VacuumPermittivity is ε0 in F/m.
	VacuumPermittivity = 8.854187817e-12

	epsSmall      = 1e-6 // SmallEpsilon: distance floors, Fresnel clamps
	traceTMin     = 1e-5 // multipath trace tmin
	multipathBias = 1e-5 // reflection re-launch offset
	dfrBias       = 1e-4 // diffraction visibility bias
	visMinLength  = 1e-5 // diffraction segments at most this long are visible
	traceTMax     = 1e8  // finite trace tmax / reflection miss distance
	normFloor     = 1e-12
)

// vec3 is a float64 3-vector.
type vec3 [3]float64

func (a vec3) add(b vec3) vec3      { return vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a vec3) sub(b vec3) vec3      { return vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a vec3) scale(s float64) vec3 { return vec3{a[0] * s, a[1] * s, a[2] * s} }
func (a vec3) neg() vec3            { return vec3{-a[0], -a[1], -a[2]} }
func (a vec3) dot(b vec3) float64   { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func (a vec3) norm() float64        { return math.Sqrt(math.Max(a.dot(a), 0)) }
func (a vec3) cross(b vec3) vec3 {
	return vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// normalize is v·rsqrt(max(|v|², 1e-12)): the zero vector stays zero.
func (a vec3) normalize() vec3 { return a.scale(1 / math.Sqrt(math.Max(a.dot(a), normFloor))) }

// finite reports whether every component is finite.
func (a vec3) finite() bool { return finite(a[0]) && finite(a[1]) && finite(a[2]) }

func (a vec3) f32() [3]float32 { return [3]float32{float32(a[0]), float32(a[1]), float32(a[2])} }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// fallbackAxis is +z unless d is nearly parallel to z, then +y.
func fallbackAxis(d vec3) vec3 {
	if math.Abs(d[2]) < 0.9 {
		return vec3{0, 0, 1}
	}
	return vec3{0, 1, 0}
}

// stablePerp is the unit component of preferred perpendicular to the unit
// axis, or, when that is degenerate (|·|² ≤ 1e-12), the perpendicular
// component of the fallback axis.
func stablePerp(axis, preferred vec3) vec3 {
	p := preferred.sub(axis.scale(preferred.dot(axis)))
	if p.dot(p) > normFloor {
		return p.normalize()
	}
	f := fallbackAxis(axis)
	return f.sub(axis.scale(f.dot(axis))).normalize()
}

// cplx helpers: Go's complex128 is used throughout; these name the few
// operations whose floors are part of the contract.

// expI is exp(i·phi).
func expI(phi float64) complex128 { return complex(math.Cos(phi), math.Sin(phi)) }

// cvec is a complex 3-vector (a field).
type cvec [3]complex128

func (a cvec) add(b cvec) cvec { return cvec{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a cvec) sub(b cvec) cvec { return cvec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a cvec) mul(c complex128) cvec {
	return cvec{a[0] * c, a[1] * c, a[2] * c}
}

// dotReal is Σ a_i·b_i for a real vector b (no conjugation).
func (a cvec) dotReal(b vec3) complex128 {
	return a[0]*complex(b[0], 0) + a[1]*complex(b[1], 0) + a[2]*complex(b[2], 0)
}

// power is Σ|a_i|².
func (a cvec) power() float64 {
	var p float64
	for _, c := range a {
		p += real(c)*real(c) + imag(c)*imag(c)
	}
	return p
}

func (a cvec) finite() bool {
	for _, c := range a {
		if !finite(real(c)) || !finite(imag(c)) {
			return false
		}
	}
	return true
}

// along is the complex field c·b for a real direction b.
func along(b vec3, c complex128) cvec {
	return cvec{complex(b[0], 0) * c, complex(b[1], 0) * c, complex(b[2], 0) * c}
}
