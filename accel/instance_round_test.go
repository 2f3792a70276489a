package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// down32 and up32 agree with math.Nextafter32 on random magnitudes of both
// signs and on the edge cases: zeros, subnormals, the float32 limits, values
// beyond them and exactly representable values.
func TestOutwardRoundingMatchesNextafter(t *testing.T) {
	want := func(x float64, dir float32) uint32 {
		f := float32(x)
		if (dir < 0 && float64(f) > x) || (dir > 0 && float64(f) < x) {
			f = math.Nextafter32(f, dir)
		}
		return math.Float32bits(f)
	}
	inf := float32(math.Inf(1))
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 1e-46, -1e-46, 1e-40, -1e-40, 0x1p-149, -0x1p-149,
		math.MaxFloat32, -math.MaxFloat32, 2 * math.MaxFloat32, -2 * math.MaxFloat32, math.Inf(1), math.Inf(-1),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1 + 0x1p-30, -1 - 0x1p-30}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		x := math.Ldexp(rng.Float64(), rng.IntN(300)-150)
		if rng.IntN(2) == 0 {
			x = -x
		}
		xs = append(xs, x)
	}
	for _, x := range xs {
		require.Equal(t, want(x, -inf), down32(x), "down32(%g)", x)
		require.Equal(t, want(x, inf), up32(x), "up32(%g)", x)
	}
}
