package testscene

import (
	"math"
	"math/rand/v2"

	"github.com/rayd-go/rayd/geom"
)

// Placement is the instanced benchmark's deterministic instance set: n
// instances of geometry 0, each a random rotation scaled uniformly by 1/8
// (the light grid a quarter of the cube wide) and translated uniformly in
// [−1, 1]³. The same seed gives the same set.
func Placement(n int, seed uint64) []geom.Instance {
	r := rand.New(rand.NewPCG(seed, 0x1a57))
	in := make([]geom.Instance, n)
	for i := range in {
		t := RandomTransform(r, 0)
		// Replace the random per-axis scale by a uniform 1/8: normalise
		// each column, then scale.
		for j := range 3 {
			l := math.Sqrt(float64(t[j])*float64(t[j]) + float64(t[4+j])*float64(t[4+j]) + float64(t[8+j])*float64(t[8+j]))
			for k := range 3 {
				t[4*k+j] = float32(float64(t[4*k+j]) / l / 8)
			}
		}
		for k := range 3 {
			t[4*k+3] = float32(2*r.Float64() - 1)
		}
		in[i] = geom.Instance{Geometry: 0, Transform: t}
	}
	return in
}
