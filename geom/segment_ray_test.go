package geom_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
)

func TestSegmentRayRefusesDegenerateAndNonFinite(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		name string
		a, b [3]float32
	}{
		{"NaN start", [3]float32{nan, 0, 0}, [3]float32{1, 0, 0}},
		{"Inf end", [3]float32{0, 0, 0}, [3]float32{0, inf, 0}},
		{"zero length", [3]float32{1, 2, 3}, [3]float32{1, 2, 3}},
		{"at the minimum length", [3]float32{0, 0, 0}, [3]float32{geom.MinSegmentLength, 0, 0}},
	} {
		_, _, _, ok := geom.SegmentRay(c.a, c.b)
		assert.False(t, ok, c.name)
	}
	_, _, tmax, ok := geom.SegmentRay([3]float32{0, 0, 0}, [3]float32{0, 0, 2 * geom.MinSegmentLength})
	assert.True(t, ok, "just above the minimum length")
	assert.Equal(t, float32(geom.MinSegmentLength), tmax)
}

func TestSegmentRayAxisAligned(t *testing.T) {
	o, d, tmax, ok := geom.SegmentRay([3]float32{1, -2, 3}, [3]float32{1, -2, 7})
	require.True(t, ok)
	assert.Equal(t, [3]float32{0, 0, 1}, d)
	assert.Equal(t, [3]float32{1, -2, 3 + geom.MultipathBias}, o)
	assert.Equal(t, float32(4)-geom.MinSegmentLength, tmax)
}

// The ray reaches the end point within float32 rounding: origin + (tmax +
// MinSegmentLength − MultipathBias)·dir ≈ b, and |dir| ≈ 1.
func TestSegmentRayReachesTheEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 10000 {
		var a, b [3]float32
		for k := range 3 {
			a[k], b[k] = float32(r.Float64()*20-10), float32(r.Float64()*20-10)
		}
		o, d, tmax, ok := geom.SegmentRay(a, b)
		require.True(t, ok)
		n := math.Sqrt(float64(d[0])*float64(d[0]) + float64(d[1])*float64(d[1]) + float64(d[2])*float64(d[2]))
		require.InDelta(t, 1, n, 1e-6)
		s := float64(tmax) + float64(geom.MinSegmentLength) - float64(geom.MultipathBias)
		for k := range 3 {
			require.InDelta(t, float64(b[k]), float64(o[k])+s*float64(d[k]), 1e-5*(1+math.Abs(float64(b[k]))))
		}
	}
}

// The ray of a segment from the origin to (3, 4, 0): a unit direction, the
// origin moved by MultipathBias along it, and tmax shortened by
// MinSegmentLength.
func ExampleSegmentRay() {
	o, d, tmax, ok := geom.SegmentRay([3]float32{0, 0, 0}, [3]float32{3, 4, 0})
	fmt.Println(ok, d, o, tmax)
	// Output: true [0.6 0.8 0] [6e-06 8e-06 0] 4.99998
}
