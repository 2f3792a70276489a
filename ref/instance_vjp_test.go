package ref

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// worldT is the plane parameter of the world ray against the triangle
// mapped through the float64 transform x: an independent, world-space
// formulation of the frozen winner's t.
func worldT(x [12]float64, tri [3][3]float32, o, d [3]float64) float64 {
	var w [3][3]float64
	for k := range 3 {
		for i := range 3 {
			w[k][i] = x[4*i]*float64(tri[k][0]) + x[4*i+1]*float64(tri[k][1]) + x[4*i+2]*float64(tri[k][2]) + x[4*i+3]
		}
	}
	n := cross64(sub64(w[1], w[0]), sub64(w[2], w[0]))
	return dot64(n, sub64(w[0], o)) / dot64(n, d)
}

// The transform gradient of t and p matches central differences of the
// world-space plane intersection on the winners of a forward pass.
func TestInstanceTransformVJPCentralDifferences(t *testing.T) {
	r := newRand(t)
	meshes := []geom.Mesh{soupMesh(r, 60, 0.8)}
	in := testscene.RandomInstances(r, 1, 5, 0.5)
	tb, x, s := instanced(t, meshes, in)
	o, d, _ := randomRays(r, tb, 600)
	h, err := s.Intersect(context.Background(), o, d, nil, nil, geom.FlagsAll)
	require.NoError(t, err)
	checked := 0
	for i := range h.Len() {
		if !h.Valid(i) {
			continue
		}
		rec := x.Records[h.InstanceID[i]]
		p0, p1, p2 := tb.Triangle(int(h.PrimID[i]))
		tri := [3][3]float32{p0, p1, p2}
		oi, di := row3(o, i), row3(d, i)
		gT, gP := r.NormFloat64(), [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		g, ok := InstanceTransformVJP(rec.Transform, tri, oi, di, gT, gP)
		require.True(t, ok)
		var xf [12]float64
		for k := range xf {
			xf[k] = float64(rec.Transform[k])
		}
		o64, d64 := [3]float64{float64(oi[0]), float64(oi[1]), float64(oi[2])}, [3]float64{float64(di[0]), float64(di[1]), float64(di[2])}
		f := func(x [12]float64) float64 {
			tt := worldT(x, tri, o64, d64)
			return gT*tt + gP[0]*(o64[0]+tt*d64[0]) + gP[1]*(o64[1]+tt*d64[1]) + gP[2]*(o64[2]+tt*d64[2])
		}
		// The forward's float32 t is the frozen winner's t.
		require.InDelta(t, float64(h.T[i]), worldT(xf, tri, o64, d64), 1e-3*(1+float64(h.T[i])))
		const step = 1e-6
		for k := range xf {
			hi, lo := xf, xf
			hi[k] += step
			lo[k] -= step
			num := (f(hi) - f(lo)) / (2 * step)
			require.InDelta(t, num, g[k], 1e-5*(1+math.Abs(num)), "row %d entry %d", i, k)
		}
		checked++
	}
	require.Greater(t, checked, 20)
	// A ray in the plane of the triangle has no gradient.
	flat := [3][3]float32{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}
	_, ok := InstanceTransformVJP(geom.Identity, flat, [3]float32{0, 0, 0}, [3]float32{1, 0, 0}, 1, [3]float64{})
	require.False(t, ok)
}
