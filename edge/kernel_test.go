package edge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/testscene"
)

// TestKernelMathIsTheQueriesMath: RaySegment returns the record a one-edge
// query writes (distance, ray_t, edge_t), and the box bounds never exceed
// the squared distance of an edge inside the box (RayBoxBound) or of a
// point's nearest point (PointBoxBound), and are 0 for a box holding the
// point.
func TestKernelMathIsTheQueriesMath(t *testing.T) {
	r := rand.New(rand.NewPCG(testscene.Seed(t), 3))
	s := quadScene(t)
	a, b := s.endpoints(0)
	f := func() float32 { return float32(r.Float64()*4 - 2) }
	for range 2000 {
		o := []float32{f(), f(), f()}
		d := []float32{f(), f(), f()}
		tmax := []float32{float32(r.Float64() * 3)}
		if r.IntN(3) == 0 {
			tmax[0] = float32(math.Inf(1))
		}
		one := &Scene{Tables: s.Tables, Edges: s.Edges, Mask: []bool{true, false, false, false, false}}
		want, err := one.NearestRay(o, d, tmax, nil)
		require.NoError(t, err)
		ov, dv := vec{float64(o[0]), float64(o[1]), float64(o[2])}, vec{float64(d[0]), float64(d[1]), float64(d[2])}
		T := float64(tmax[0])
		tt, se, d2 := RaySegment(ov, dv, T, a, b)
		assert.Equal(t, want.Distance[0], float32(math.Sqrt(d2)))
		assert.Equal(t, want.RayT[0], float32(tt))
		assert.Equal(t, want.EdgeT[0], float32(se))
		var lo, hi [3]float64
		for k := range 3 {
			lo[k], hi[k] = min(a[k], b[k])-r.Float64(), max(a[k], b[k])+r.Float64()
		}
		assert.LessOrEqual(t, RayBoxBound(ov, dv, T, lo, hi), d2*(1+1e-12))
		_, _, pd2 := pointSegment(ov, a, b)
		assert.LessOrEqual(t, PointBoxBound(ov, lo, hi), pd2)
		inside := vec{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2}
		assert.Zero(t, PointBoxBound(inside, lo, hi))
	}
}
