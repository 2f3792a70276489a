package geom

// ObjectRay maps the world ray (o, d) into the object space of instance
// record r, in float32 with every operation rounded (no contraction), in
// exactly this order (Inv = r.Inverse row-major, T = r.Transform):
//
//	q[k]  = o[k] − T[4k+3]                                     k = 0, 1, 2
//	o'[k] = ((Inv[3k]·q[0] + Inv[3k+1]·q[1]) + Inv[3k+2]·q[2])
//	d'[k] = ((Inv[3k]·d[0] + Inv[3k+1]·d[1]) + Inv[3k+2]·d[2])
//
// The direction is not renormalised, so the object-space parameter t of a
// hit is its world-space parameter: the queries report it unchanged. A
// CUDA port writes __fsub_rn, __fmul_rn and __fadd_rn in the same order.
func ObjectRay(r *InstanceRecord, o, d [3]float32) (oo, dd [3]float32) {
	T, inv := &r.Transform, &r.Inverse
	q := [3]float32{float32(o[0] - T[3]), float32(o[1] - T[7]), float32(o[2] - T[11])}
	for k := range 3 {
		a, b, c := inv[3*k], inv[3*k+1], inv[3*k+2]
		oo[k] = float32(float32(float32(a*q[0])+float32(b*q[1])) + float32(c*q[2]))
		dd[k] = float32(float32(float32(a*d[0])+float32(b*d[1])) + float32(c*d[2]))
	}
	return oo, dd
}

// WorldNormal is the unit world normal of a face of instance record r
// whose object-space cross product e1×e2 is n (FaceCross): the inverse
// transpose of the linear part applied in float32 with every operation
// rounded, then normalised like FaceNormal:
//
//	w[k] = ((Inv[k]·n[0] + Inv[3+k]·n[1]) + Inv[6+k]·n[2])     k = 0, 1, 2
//	l2   = (w[0]·w[0] + w[1]·w[1]) + w[2]·w[2]
//	s    = Rsqrt(max(l2, floor));  result = w·s
//
// Under the identity it equals FaceNormal up to the sign of zero
// components. A degenerate face (n = 0) gives the zero vector.
func WorldNormal(r *InstanceRecord, n [3]float32, floor float32) [3]float32 {
	inv := &r.Inverse
	var w [3]float32
	for k := range 3 {
		w[k] = float32(float32(float32(inv[k]*n[0])+float32(inv[3+k]*n[1])) + float32(inv[6+k]*n[2]))
	}
	l2 := float32(float32(float32(w[0]*w[0])+float32(w[1]*w[1])) + float32(w[2]*w[2]))
	s := Rsqrt(max(l2, floor))
	return [3]float32{float32(w[0] * s), float32(w[1] * s), float32(w[2] * s)}
}

// Apply maps the object-space point p to the world through t, in float64.
// It is the exact map the instance stands for; the queries never use it
// (they map rays to object space with ObjectRay), tests and bounds do.
func (t *Transform) Apply(p [3]float64) [3]float64 {
	var w [3]float64
	for k := range 3 {
		w[k] = float64(t[4*k])*p[0] + float64(t[4*k+1])*p[1] + float64(t[4*k+2])*p[2] + float64(t[4*k+3])
	}
	return w
}
