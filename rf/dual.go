package rf

import "math"

// Forward-mode dual numbers for the VJP: a value and its partial derivatives
// with respect to the nParams per-lane parameters (see the p* indices).
const nParams = 15

// Parameter slots of one lane.
const (
	pEdgePos  = 0 // 3 slots
	pEdgeDir  = 3 // 3 slots
	pTMin     = 6
	pTMax     = 7
	pExt      = 8
	pSrc      = 9 // 3 slots
	pPower    = 12
	pGain     = 13 // gain of the state's material row
	pFaceGain = 14 // gain of the suffix face's material row
)

type dual struct {
	v float64
	d [nParams]float64
}

type dvec [3]dual

func dconst(v float64) dual { return dual{v: v} }

func dvar(v float64, slot int) dual {
	x := dual{v: v}
	x.d[slot] = 1
	return x
}

func dvecConst(v vec3) dvec { return dvec{dconst(v[0]), dconst(v[1]), dconst(v[2])} }

func dvecVar(v vec3, slot int) dvec {
	return dvec{dvar(v[0], slot), dvar(v[1], slot+1), dvar(v[2], slot+2)}
}

func (a dual) add(b dual) dual {
	a.v += b.v
	for i := range a.d {
		a.d[i] += b.d[i]
	}
	return a
}

func (a dual) sub(b dual) dual { return a.add(b.scale(-1)) }

func (a dual) scale(k float64) dual {
	a.v *= k
	for i := range a.d {
		a.d[i] *= k
	}
	return a
}

func (a dual) mul(b dual) dual {
	r := dual{v: a.v * b.v}
	for i := range r.d {
		r.d[i] = a.d[i]*b.v + a.v*b.d[i]
	}
	return r
}

func (a dual) div(b dual) dual {
	r := dual{v: a.v / b.v}
	for i := range r.d {
		r.d[i] = (a.d[i]*b.v - a.v*b.d[i]) / (b.v * b.v)
	}
	return r
}

// chain applies a scalar function with value f and derivative df at a.v.
func (a dual) chain(f, df float64) dual {
	r := dual{v: f}
	for i := range r.d {
		r.d[i] = df * a.d[i]
	}
	return r
}

func (a dual) sqrt() dual {
	s := math.Sqrt(a.v)
	if s == 0 {
		return dconst(0)
	}
	return a.chain(s, 0.5/s)
}

// maxc is max(a, c) with the derivative of a only where a > c strictly.
func (a dual) maxc(c float64) dual {
	if a.v > c {
		return a
	}
	return dconst(c)
}

// minc is min(a, c) with the derivative of a only where a < c strictly.
func (a dual) minc(c float64) dual {
	if a.v < c {
		return a
	}
	return dconst(c)
}

func (a dvec) add(b dvec) dvec { return dvec{a[0].add(b[0]), a[1].add(b[1]), a[2].add(b[2])} }
func (a dvec) sub(b dvec) dvec { return dvec{a[0].sub(b[0]), a[1].sub(b[1]), a[2].sub(b[2])} }
func (a dvec) mul(s dual) dvec { return dvec{a[0].mul(s), a[1].mul(s), a[2].mul(s)} }
func (a dvec) scale(k float64) dvec {
	return dvec{a[0].scale(k), a[1].scale(k), a[2].scale(k)}
}
func (a dvec) dot(b dvec) dual { return a[0].mul(b[0]).add(a[1].mul(b[1])).add(a[2].mul(b[2])) }
func (a dvec) cross(b dvec) dvec {
	return dvec{a[1].mul(b[2]).sub(a[2].mul(b[1])), a[2].mul(b[0]).sub(a[0].mul(b[2])), a[0].mul(b[1]).sub(a[1].mul(b[0]))}
}
func (a dvec) norm() dual { return a.dot(a).maxc(0).sqrt() }

// normalize is v·rsqrt(max(|v|², 1e-12)), as vec3.normalize.
func (a dvec) normalize() dvec { return a.mul(dconst(1).div(a.dot(a).maxc(normFloor).sqrt())) }

func (a dvec) val() vec3 { return vec3{a[0].v, a[1].v, a[2].v} }

// stablePerp mirrors the float64 stablePerp, choosing the branch by value.
func (a dvec) stablePerp(preferred dvec) dvec {
	p := preferred.sub(a.mul(preferred.dot(a)))
	if p.dot(p).v > normFloor {
		return p.normalize()
	}
	f := dvecConst(fallbackAxis(a.val()))
	return f.sub(a.mul(f.dot(a))).normalize()
}
