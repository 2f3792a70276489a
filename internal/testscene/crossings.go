package testscene

import (
	"math"
	"math/rand/v2"

	"github.com/rayd-go/rayd/geom"
)

// RandomSegments returns n segments of the crossings tests: from RandomRays'
// origins, to a random scene vertex (a quarter), two to four units along
// the ray (half) or a short way (the rest), with a few degenerate and
// non-finite rows mixed in.
func RandomSegments(r *rand.Rand, tb *geom.Tables, n int) (start, end []float32) {
	o, d, _ := RandomRays(r, tb, n)
	start, end = o, make([]float32, 3*n)
	for i := range n {
		s := float32(2 + 2*r.Float64())
		switch r.IntN(16) {
		case 0: // degenerate
			s = 0
		case 1: // non-finite end
			end[3*i] = float32(math.NaN())
			continue
		case 2, 3, 4, 5:
			vi := r.IntN(tb.NumVertices())
			copy(end[3*i:3*i+3], tb.Vertices[3*vi:3*vi+3])
			continue
		case 6, 7, 8:
			s = float32(r.Float64() * 0.5)
		}
		var l float64
		for k := range 3 {
			l += float64(d[3*i+k]) * float64(d[3*i+k])
		}
		l = math.Max(math.Sqrt(l), 1e-30)
		for k := range 3 {
			end[3*i+k] = o[3*i+k] + float32(float64(s)*float64(d[3*i+k])/l)
		}
	}
	return start, end
}

// CrossingsDiff returns the first row where two crossings records differ
// (bit for bit, every field), or -1; records of other shapes differ at 0.
func CrossingsDiff(a, b *geom.Crossings) int {
	if a.K != b.K || a.Rows() != b.Rows() || len(a.T) != len(b.T) {
		return 0
	}
	k := a.K
	for i := range a.Rows() {
		if a.Count[i] != b.Count[i] || a.Overflow[i] != b.Overflow[i] {
			return i
		}
		for j := i * k; j < i*k+k; j++ {
			if math.Float32bits(a.T[j]) != math.Float32bits(b.T[j]) || a.Prim[j] != b.Prim[j] || a.Shape[j] != b.Shape[j] {
				return i
			}
		}
	}
	return -1
}
