package geom

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The parity segment ends farther from the point than any point of the
// scene's reach cube, per component p + dir·R in float32.
func TestParityEndLiesBeyondTheScene(t *testing.T) {
	verts := []float32{-3, 0, 1, 2, 5, -1, 0, 0, 0, 100, 100, 100}
	faces := []int32{0, 1, 2}
	assert.Equal(t, float32(5), ParityReach(verts, faces), "unreferenced vertices do not count")
	assert.Equal(t, float32(0), ParityReach(verts, nil))
	d := ParityDirection()
	for _, p := range [][3]float32{{0, 0, 0}, {4, -5, 5}, {-1e6, 2, 3}, {1e-30, 0, -1e-30}} {
		e := ParityEnd(p, 5)
		a := max(float32(math.Abs(float64(p[0]))), float32(math.Abs(float64(p[1]))), float32(math.Abs(float64(p[2]))))
		r := ParityLength(a, 5)
		assert.Equal(t, 1+4*max(a, 5), r)
		var l2 float64
		for k := range 3 {
			assert.Equal(t, float32(p[k]+float32(d[k]*r)), e[k], "component %d", k)
			l2 += math.Pow(float64(e[k])-float64(p[k]), 2)
		}
		// Every point of [−5, 5]³ is within 2·√3·max(a, 5) of p.
		assert.Greater(t, math.Sqrt(l2), 2*math.Sqrt(3)*float64(max(a, 5))+float64(MinSegmentLength), "p %v", p)
	}
	ends := ParityEnds([]float32{1, 2, 3, float32(math.NaN()), 0, 0}, 5)
	assert.Equal(t, ParityEnd([3]float32{1, 2, 3}, 5), [3]float32(ends[:3]))
	assert.True(t, math.IsNaN(float64(ends[3])))
}

func TestParitySigns(t *testing.T) {
	pts := []float32{0, 0, 0, 1, 1, 1, 2, 2, 2, float32(math.Inf(1)), 0, 0, 3, 3, 3}
	got := ParitySigns(pts, []bool{true, true, true, true, false}, []int32{0, 1, 4, 1, 1})
	assert.Equal(t, []int8{1, -1, 1, 0, 0}, got)
	assert.Equal(t, []int8{1, -1}, ParitySigns(pts[:6], nil, []int32{2, 3}))
}

// WindingSign settles a row only when the whole interval decides alike,
// and then as the reference's float32 rounding of sum/4π does.
func TestWindingSign(t *testing.T) {
	half := WindingFourPi / 2
	thr := WindingFourPi * (0.5 - 0x1p-26) // float32(w) reaches 1/2 from here
	for _, c := range []struct {
		sum, bound float64
		sign       int8
		certain    bool
	}{
		{4 * math.Pi, 1e-9, -1, true},
		{0, 1e-9, 1, true},
		{-4 * math.Pi, 0, 1, true},
		{half, 0, -1, true},
		{half, 1e-12, -1, true},
		{thr, 0, -1, true},
		{math.Nextafter(thr, 0), 0, 1, true},
		{thr, 1e-12, 0, false},
		{thr - 1e-6, 1e-12, 1, true},
		{thr + 1e-6, 1e-12, -1, true},
		{thr - 1e-6, 1e-5, 0, false},
		{1, -1, 0, false},
		{1, math.Inf(1), 0, false},
		{1, math.NaN(), 0, false},
		{math.NaN(), 0, 0, true},
	} {
		s, ok := WindingSign(c.sum, c.bound)
		assert.Equal(t, c.certain, ok, "%+v", c)
		if ok {
			assert.Equal(t, c.sign, s, "%+v", c)
			if c.sign != 0 {
				assert.Equal(t, c.sign == -1, WindingInside(c.sum), "%+v", c)
			}
		}
	}
	// Just below 1/2 in float64 the float32 rounding already says inside:
	// the decision is the reference's, not the float64 comparison.
	below := math.Nextafter(half, 0)
	assert.True(t, WindingInside(below))
	s, ok := WindingSign(below, 0)
	assert.True(t, ok)
	assert.Equal(t, int8(-1), s)
}
