package testscene

import (
	"math"
	"math/rand/v2"

	"github.com/rayd-go/rayd/geom"
)

// RandomTransform is a random rotation (axis and angle uniform), scaled by
// a factor in [0.5, 2) per axis before the rotation, then translated by up
// to ±shift per coordinate: a well-conditioned, non-orthogonal affine map.
func RandomTransform(r *rand.Rand, shift float64) geom.Transform {
	ax := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	l := math.Sqrt(ax[0]*ax[0] + ax[1]*ax[1] + ax[2]*ax[2])
	for k := range ax {
		ax[k] /= l
	}
	th := r.Float64() * 2 * math.Pi
	c, s := math.Cos(th), math.Sin(th)
	x, y, z := ax[0], ax[1], ax[2]
	rot := [9]float64{
		c + x*x*(1-c), x*y*(1-c) - z*s, x*z*(1-c) + y*s,
		y*x*(1-c) + z*s, c + y*y*(1-c), y*z*(1-c) - x*s,
		z*x*(1-c) - y*s, z*y*(1-c) + x*s, c + z*z*(1-c),
	}
	sc := [3]float64{0.5 + 1.5*r.Float64(), 0.5 + 1.5*r.Float64(), 0.5 + 1.5*r.Float64()}
	var t geom.Transform
	for i := range 3 {
		for j := range 3 {
			t[4*i+j] = float32(rot[3*i+j] * sc[j])
		}
		t[4*i+3] = float32((2*r.Float64() - 1) * shift)
	}
	return t
}

// RandomInstances places n instances of the meshes 0..meshes−1 (geometry
// i mod meshes for instance i) with RandomTransform.
func RandomInstances(r *rand.Rand, meshes, n int, shift float64) []geom.Instance {
	in := make([]geom.Instance, n)
	for i := range in {
		in[i] = geom.Instance{Geometry: i % meshes, Transform: RandomTransform(r, shift)}
	}
	return in
}

// Translation is the transform x + (tx, ty, tz).
func Translation(tx, ty, tz float32) geom.Transform {
	return geom.Transform{1, 0, 0, tx, 0, 1, 0, ty, 0, 0, 1, tz}
}
