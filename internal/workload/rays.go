package workload

import (
	"math"
	"math/rand/v2"
)

// normalPair draws two independent standard normal values with the
// Box–Muller transform of two uniforms (float64 arithmetic, one rounding to
// float32 each). The math package's Log, Sqrt, Cos and Sin are deterministic
// for a given GOARCH; across architectures the last bit may differ.
func normalPair(r *rand.Rand) (float32, float32) {
	u1 := 1 - r.Float64() // (0, 1]: the logarithm stays finite
	u2 := r.Float64()
	rad := math.Sqrt(-2 * math.Log(u1))
	s, c := math.Sincos(2 * math.Pi * u2)
	return float32(rad * c), float32(rad * s)
}

// normals fills v with standard normal values, two per Box–Muller draw.
func normals(r *rand.Rand, v []float32) {
	for i := 0; i < len(v); i += 2 {
		a, b := normalPair(r)
		v[i] = a
		if i+1 < len(v) {
			v[i+1] = b
		}
	}
}

// normalize scales each row of d to unit length in float32:
// d / sqrt((x² + y²) + z²), rows of zero length are left as they are.
func normalize(d []float32) {
	for i := 0; i < len(d); i += 3 {
		x, y, z := d[i], d[i+1], d[i+2]
		l2 := float32(float32(float32(x*x)+float32(y*y)) + float32(z*z))
		l := float32(math.Sqrt(float64(l2)))
		if l == 0 {
			continue
		}
		d[i], d[i+1], d[i+2] = float32(x/l), float32(y/l), float32(z/l)
	}
}

// PlaneRays is the coherent batch of the light configuration: n rays rising
// from the plane z = −1 toward the grid. From one generator seeded with seed
// it draws first all origins, U³·1.8 − 0.9 with z then set to −1, then all
// directions, N³ (standard normal, Box–Muller) with z ← |z| + 0.25, normalized.
// o and d hold 3 values per ray.
func PlaneRays(n int, seed uint64) (o, d []float32) {
	n = max(n, 0)
	r := newRand(seed)
	o = make([]float32, 3*n)
	for i := range o {
		o[i] = float32(float32(uniform(r)*1.8) - 0.9)
	}
	for i := range n {
		o[3*i+2] = -1
	}
	d = make([]float32, 3*n)
	normals(r, d)
	for i := range n {
		d[3*i+2] = float32(float32(math.Abs(float64(d[3*i+2]))) + 0.25)
	}
	normalize(d)
	return o, d
}

// VolumeRays is the incoherent batch of the compute configuration: from one
// generator seeded with seed, first all origins U³·2 − 1, then all
// directions N³ normalized. o and d hold 3 values per ray.
func VolumeRays(n int, seed uint64) (o, d []float32) {
	n = max(n, 0)
	r := newRand(seed)
	o = make([]float32, 3*n)
	for i := range o {
		o[i] = float32(float32(uniform(r)*2) - 1)
	}
	d = make([]float32, 3*n)
	normals(r, d)
	normalize(d)
	return o, d
}
