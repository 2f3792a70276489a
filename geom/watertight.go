package geom

// Watertight is the Woop–Benthin–Wald watertight ray/triangle test of spec
// §8.2, evaluated in float32 with explicit rounding after every operation.
// It reports whether the ray o + t·d hits the triangle (p0, p1, p2) with
// t ∈ [tmin, tmax] (both ends inclusive), and then t and the barycentric
// weights u (of p1) and v (of p2), so that the hit point is
// p0 + u·(p1−p0) + v·(p2−p0). There is no back-face culling. Degenerate
// triangles, rays lying in the triangle's plane, a zero direction and any
// NaN input give no hit. Rays through a shared edge or vertex hit at least
// one of the triangles sharing it.
//
// Exact operation sequence (f32 = IEEE binary32, round to nearest even, no
// contraction: a CUDA port uses __fmul_rn, __fadd_rn, __fsub_rn, __fdiv_rn
// and fmaf, or compiles with -fmad=false -ftz=false -prec-div=true):
//
//	// 1. dominant axis: the first largest |d| wins a tie
//	kz = 0; if |d[1]| > |d[kz]|: kz = 1; if |d[2]| > |d[kz]|: kz = 2
//	kx = (kz+1)%3; ky = (kx+1)%3
//	if d[kz] == 0: no hit
//	if d[kz] < 0: swap kx, ky
//	// 2. shear constants (f32 divisions)
//	sx = d[kx]/d[kz]; sy = d[ky]/d[kz]; sz = 1/d[kz]
//	// 3. translate (f32 subtractions, per component)
//	a = p0-o; b = p1-o; c = p2-o
//	// 4. shear (f32 multiply, then f32 subtract)
//	ax = a[kx] - sx*a[kz]; ay = a[ky] - sy*a[kz]   (likewise bx, by, cx, cy)
//	// 5. edge functions: U weighs p0, V weighs p1, W weighs p2
//	U = DiffOfProducts(cx, by, cy, bx)   // cx*by - cy*bx
//	V = DiffOfProducts(ax, cy, ay, cx)   // ax*cy - ay*cx
//	W = DiffOfProducts(bx, ay, by, ax)   // bx*ay - by*ax
//	// 6. on an edge in f32 (-0 included): recompute all three in float64;
//	//    both products are exact, one f64 subtraction, one __double2float_rn
//	if U == 0 || V == 0 || W == 0:
//	    U = f32(f64(cx)*f64(by) - f64(cy)*f64(bx))   (likewise V, W)
//	// 7. mixed signs: outside
//	if (U<0 || V<0 || W<0) && (U>0 || V>0 || W>0): no hit
//	// 8. determinant (two f32 adds)
//	det = (U + V) + W
//	if det == 0: no hit
//	// 9. distance (three f32 multiplies, two f32 adds, one multiply, one divide)
//	T = ((U*a[kz]) + (V*b[kz])) + (W*c[kz])
//	t = (T*sz) / det
//	if !(t >= tmin && t <= tmax): no hit   (rejects NaN too)
//	// 10. barycentrics (f32 divisions)
//	u = V/det; v = W/det
//
// t is obtained by division rather than by comparing T·sz against tmax·det:
// the two forms do not round alike, and the division is what decides
// acceptance.
func Watertight(o, d, p0, p1, p2 [3]float32, tmin, tmax float32) (t, u, v float32, ok bool) {
	// 1. Dominant axis and its permutation.
	kz := 0
	if abs32(d[1]) > abs32(d[kz]) {
		kz = 1
	}
	if abs32(d[2]) > abs32(d[kz]) {
		kz = 2
	}
	kx := kz + 1
	if kx == 3 {
		kx = 0
	}
	ky := kx + 1
	if ky == 3 {
		ky = 0
	}
	dz := d[kz]
	if dz == 0 {
		return 0, 0, 0, false
	}
	if dz < 0 {
		kx, ky = ky, kx
	}
	// 2. Shear constants.
	sx := float32(d[kx] / dz)
	sy := float32(d[ky] / dz)
	sz := float32(1 / dz)
	// 3. Vertices relative to the origin.
	a := [3]float32{float32(p0[0] - o[0]), float32(p0[1] - o[1]), float32(p0[2] - o[2])}
	b := [3]float32{float32(p1[0] - o[0]), float32(p1[1] - o[1]), float32(p1[2] - o[2])}
	c := [3]float32{float32(p2[0] - o[0]), float32(p2[1] - o[1]), float32(p2[2] - o[2])}
	// 4. Shear and scale so that the ray becomes the +z axis.
	ax := float32(a[kx] - float32(sx*a[kz]))
	ay := float32(a[ky] - float32(sy*a[kz]))
	bx := float32(b[kx] - float32(sx*b[kz]))
	by := float32(b[ky] - float32(sy*b[kz]))
	cx := float32(c[kx] - float32(sx*c[kz]))
	cy := float32(c[ky] - float32(sy*c[kz]))
	// 5. Edge functions (U weighs p0, V weighs p1, W weighs p2).
	U := DiffOfProducts(cx, by, cy, bx)
	V := DiffOfProducts(ax, cy, ay, cx)
	W := DiffOfProducts(bx, ay, by, ax)
	// 6. Exactly on an edge in float32: decide in float64.
	if U == 0 || V == 0 || W == 0 {
		U = float32(float64(cx)*float64(by) - float64(cy)*float64(bx))
		V = float32(float64(ax)*float64(cy) - float64(ay)*float64(cx))
		W = float32(float64(bx)*float64(ay) - float64(by)*float64(ax))
	}
	// 7. Mixed signs: the ray passes outside.
	if (U < 0 || V < 0 || W < 0) && (U > 0 || V > 0 || W > 0) {
		return 0, 0, 0, false
	}
	// 8. Determinant.
	det := float32(float32(U+V) + W)
	if det == 0 {
		return 0, 0, 0, false
	}
	// 9. Distance.
	T := float32(float32(float32(U*a[kz])+float32(V*b[kz])) + float32(W*c[kz]))
	t = float32(float32(T*sz) / det)
	if !(t >= tmin && t <= tmax) {
		return 0, 0, 0, false
	}
	// 10. Barycentrics.
	return t, float32(V / det), float32(W / det), true
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
