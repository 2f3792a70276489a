package ref

import "github.com/rayd-go/rayd/geom"

// InstanceTransformVJP is the frozen-winner backward pass of an instanced
// hit with respect to its instance's transform, in float64: the gradient
// of gT·t + gP·p (p = o + t·d, the world hit point) with respect to the 12
// entries of xf (row-major 3×4), for the world ray (o, d) and the object
// triangle tri that won the forward pass. The winner is frozen: t is the
// parameter where the ray meets the plane of the transformed triangle, and
// its derivative is that of the plane intersection.
//
// Derivation, with M = A⁻¹ (A the linear part, b the translation),
// o' = M(o − b), d' = M·d and n the object normal (p1−p0)×(p2−p0):
// t = n·(p0 − o') / n·d', so ∂t/∂o' = −n/(n·d') and ∂t/∂d' = −t·n/(n·d');
// ∂t/∂M = ∂t/∂o' ⊗ (o − b) + ∂t/∂d' ⊗ d, ∂t/∂b = −Mᵀ·∂t/∂o', and with
// dM = −M·dA·M, ∂t/∂A = −Mᵀ·(∂t/∂M)·Mᵀ. A ray parallel to the plane or a
// singular A has no gradient: ok is false and the gradient zero.
func InstanceTransformVJP(xf geom.Transform, tri [3][3]float32, o, d [3]float32, gT float64, gP [3]float64) (g [12]float64, ok bool) {
	var a, m [3][3]float64
	var b, o64, d64 [3]float64
	for i := range 3 {
		for j := range 3 {
			a[i][j] = float64(xf[4*i+j])
		}
		b[i], o64[i], d64[i] = float64(xf[4*i+3]), float64(o[i]), float64(d[i])
	}
	if !inverse3(a, &m) {
		return g, false
	}
	var p [3][3]float64
	for k := range 3 {
		for c := range 3 {
			p[k][c] = float64(tri[k][c])
		}
	}
	n := cross64(sub64(p[1], p[0]), sub64(p[2], p[0]))
	q := sub64(o64, b)
	oo, dd := mul3(m, q), mul3(m, d64)
	den := dot64(n, dd)
	if den == 0 {
		return g, false
	}
	t := dot64(n, sub64(p[0], oo)) / den
	// The point's cotangent folds into t's: ∂p/∂θ = d·∂t/∂θ.
	gt := gT + dot64(gP, d64)
	var dto, dtd [3]float64
	for i := range 3 {
		dto[i] = -n[i] / den * gt
		dtd[i] = -t * n[i] / den * gt
	}
	var dM [3][3]float64
	for i := range 3 {
		for j := range 3 {
			dM[i][j] = dto[i]*q[j] + dtd[i]*d64[j]
		}
	}
	// ∂/∂A = −Mᵀ·dM·Mᵀ.
	var tmp, dA [3][3]float64
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				tmp[i][j] += m[k][i] * dM[k][j]
			}
		}
	}
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				dA[i][j] -= tmp[i][k] * m[j][k]
			}
		}
	}
	for i := range 3 {
		var db float64
		for k := range 3 {
			db -= m[k][i] * dto[k]
		}
		for j := range 3 {
			g[4*i+j] = dA[i][j]
		}
		g[4*i+3] = db
	}
	return g, true
}

func inverse3(a [3][3]float64, m *[3][3]float64) bool {
	det := a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) - a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
		a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	if det == 0 {
		return false
	}
	for i := range 3 {
		for j := range 3 {
			// m[i][j] = cofactor(j, i) / det
			r0, r1 := (j+1)%3, (j+2)%3
			c0, c1 := (i+1)%3, (i+2)%3
			m[i][j] = (a[r0][c0]*a[r1][c1] - a[r0][c1]*a[r1][c0]) / det
		}
	}
	return true
}

func mul3(m [3][3]float64, v [3]float64) [3]float64 {
	return [3]float64{dot64(m[0], v), dot64(m[1], v), dot64(m[2], v)}
}

// TransformVJP is InstanceTransformVJP over a batch of forward rows: row i
// (rays o, d, 3 values each) hit face prim[i] of instance inst[i] (−1: a
// miss, skipped), with cotangents gT (one per row, or nil) and gP (three
// per row, or nil). It returns the gradient with respect to every
// instance's transform, 12 values per instance, summed over the rows in
// row order in float64. Rows whose ray is parallel to the frozen face's
// plane contribute nothing. Errors: a *LengthError for mismatched slices,
// an *ArgumentError for an instance or face id out of range or a face of
// another geometry than its instance's.
func (s *InstancedScene) TransformVJP(o, d []float32, inst, prim []int32, gT, gP []float32) ([]float64, error) {
	n := len(inst)
	for _, c := range []struct {
		name      string
		got, want int
		per       int
	}{{"o", len(o), 3 * n, 3}, {"d", len(d), 3 * n, 3}, {"prim", len(prim), n, 1}} {
		if c.got != c.want {
			return nil, &LengthError{Field: c.name, Want: c.want, Got: c.got, PerRow: c.per}
		}
	}
	if gT != nil && len(gT) != n {
		return nil, &LengthError{Field: "gT", Want: n, Got: len(gT), PerRow: 1}
	}
	if gP != nil && len(gP) != 3*n {
		return nil, &LengthError{Field: "gP", Want: 3 * n, Got: len(gP), PerRow: 3}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]float64, 12*s.inst.Len())
	for i := range n {
		id := inst[i]
		if id < 0 {
			continue
		}
		if int(id) >= s.inst.Len() {
			return nil, &ArgumentError{Field: "inst", Reason: "row instance id out of range"}
		}
		rec := &s.inst.Records[id]
		p := prim[i]
		if p < 0 || int(p) >= s.tables.NumFaces() || s.tables.FaceShape[p] != rec.Geometry {
			return nil, &ArgumentError{Field: "prim", Reason: "row face is not a face of its instance's geometry"}
		}
		var gt float64
		if gT != nil {
			gt = float64(gT[i])
		}
		var gp [3]float64
		if gP != nil {
			gp = [3]float64{float64(gP[3*i]), float64(gP[3*i+1]), float64(gP[3*i+2])}
		}
		p0, p1, p2 := s.tables.Triangle(int(p))
		g, ok := InstanceTransformVJP(rec.Transform, [3][3]float32{p0, p1, p2}, row3(o, i), row3(d, i), gt, gp)
		if !ok {
			continue
		}
		for k := range 12 {
			out[12*int(id)+k] += g[k]
		}
	}
	return out, nil
}
