package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
)

// TestIntersectVJPUnitTriangle is the spec's check: loss = t on the unit
// triangle, ray (.25,.25,−1) + s(0,0,1).
func TestIntersectVJPUnitTriangle(t *testing.T) {
	tab, err := geom.BuildTables([]geom.Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(t, err)
	g, err := IntersectVJP(tab, []float32{.25, .25, -1}, []float32{0, 0, 1}, nil, []int32{0}, []float32{.25, .25},
		IntersectCotangents{T: []float32{1}})
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{0, 0, .5, 0, 0, .25, 0, 0, .25}, g.Vertices, 1e-15)
	assert.InDeltaSlice(t, []float64{0, 0, -1}, g.Origins, 1e-15)    // raising o lowers t
	assert.InDeltaSlice(t, []float64{0, 0, -1}, g.Directions, 1e-15) // t = 1/d_z
}

// frozenLoss is the forward of intersect for a fixed winner, in float64,
// contracted with the cotangents c.
func frozenLoss(v [3][3]float64, o, d [3]float64, c rowCot) float64 {
	e1, e2 := sub64(v[1], v[0]), sub64(v[2], v[0])
	a := [3]float64{-d[0], -d[1], -d[2]}
	bc := cross64(e1, e2)
	det := dot64(a, bc)
	rhs := sub64(o, v[0])
	t := dot64(rhs, bc) / det
	u, w := dot64(a, cross64(rhs, e2))/det, dot64(a, cross64(e1, rhs))/det
	l := math.Sqrt(math.Max(dot64(bc, bc), 1e-20))
	loss := c.t*t + c.uv[0]*u + c.uv[1]*w + c.bary[0]*(1-u-w) + c.bary[1]*u + c.bary[2]*w
	for k := range 3 {
		loss += c.p[k]*(o[k]+t*d[k]) + (c.n[k]+c.geoN[k])*bc[k]/l
	}
	return loss
}

// fdCase is a scene of random triangles and rays that hit them well inside.
type fdCase struct {
	tab    *geom.Tables
	o, d   []float32
	prim   []int32
	uv     []float32
	cot    IntersectCotangents
	active []bool
}

func randomCase(rng *rand.Rand, faces, rows int) fdCase {
	var m geom.Mesh
	r := func() float32 { return rng.Float32()*2 - 1 }
	for f := 0; f < faces; {
		v := [3][3]float32{{r(), r(), r()}, {r(), r(), r()}, {r(), r(), r()}}
		shared := f > 0 && f == faces-1 // the last face reuses vertex 0, so scattering sums
		if shared {
			v[0] = [3]float32{m.Vertices[0], m.Vertices[1], m.Vertices[2]}
		}
		n := cross64(sub64(f64(v[1]), f64(v[0])), sub64(f64(v[2]), f64(v[0])))
		if dot64(n, n) < 0.05 { // keep triangles well shaped
			continue
		}
		base := int32(len(m.Vertices) / 3)
		for _, p := range v {
			m.Vertices = append(m.Vertices, p[:]...)
		}
		m.Faces = append(m.Faces, base, base+1, base+2)
		if shared {
			m.Faces[len(m.Faces)-3] = 0
		}
		f++
	}
	tab, _ := geom.BuildTables([]geom.Mesh{m})
	c := fdCase{tab: tab}
	for len(c.prim) < rows {
		p := rng.IntN(faces)
		p0, p1, p2 := tab.Triangle(p)
		v := [3][3]float64{f64(p0), f64(p1), f64(p2)}
		u, w := 0.1+0.4*rng.Float64(), 0.1+0.4*rng.Float64()
		e1, e2 := sub64(v[1], v[0]), sub64(v[2], v[0])
		n := cross64(e1, e2)
		dir := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		if dn := dot64(dir, n); dn*dn < 0.1*dot64(dir, dir)*dot64(n, n) {
			continue // grazing ray: not a well-conditioned case
		}
		tt := 0.5 + 2*rng.Float64()
		for k := range 3 {
			hit := v[0][k] + u*e1[k] + w*e2[k]
			c.o = append(c.o, float32(hit-tt*dir[k]))
			c.d = append(c.d, float32(dir[k]))
		}
		c.prim = append(c.prim, int32(p))
		c.uv = append(c.uv, float32(u), float32(w))
		c.active = append(c.active, true)
	}
	cot := func(per int) []float32 {
		out := make([]float32, per*rows)
		for i := range out {
			out[i] = r()
		}
		return out
	}
	c.cot = IntersectCotangents{T: cot(1), P: cot(3), N: cot(3), GeoN: cot(3), UV: cot(2), Bary: cot(3)}
	return c
}

func f64(v [3]float32) [3]float64 { return [3]float64{float64(v[0]), float64(v[1]), float64(v[2])} }

// totalLoss is Σ over rows of frozenLoss at float64 vertices vs and rays.
func (c *fdCase) totalLoss(vs, o, d []float64) float64 {
	var sum float64
	for i, p := range c.prim {
		var v [3][3]float64
		for k := range 3 {
			j := int(c.tab.Faces[3*int(p)+k])
			v[k] = [3]float64{vs[3*j], vs[3*j+1], vs[3*j+2]}
		}
		sum += frozenLoss(v, [3]float64{o[3*i], o[3*i+1], o[3*i+2]}, [3]float64{d[3*i], d[3*i+1], d[3*i+2]}, rowCotangent(c.cot, i))
	}
	return sum
}

// central returns the central finite differences of totalLoss with respect
// to every entry of x (one of the three argument arrays).
func central(x []float64, loss func() float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		h := 1e-6 * math.Max(1, math.Abs(x[i]))
		keep := x[i]
		x[i] = keep + h
		plus := loss()
		x[i] = keep - h
		minus := loss()
		x[i] = keep
		out[i] = (plus - minus) / (2 * h)
	}
	return out
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// relErr is ‖a − b‖ / ‖b‖ over groups of 3 (per vertex or per row), the
// worst group.
func relErr(a, b []float64) float64 {
	worst := 0.0
	for i := 0; i < len(a); i += 3 {
		var num, den float64
		for k := i; k < i+3; k++ {
			num += (a[k] - b[k]) * (a[k] - b[k])
			den += b[k] * b[k]
		}
		if den > 1e-20 {
			worst = math.Max(worst, math.Sqrt(num/den))
		} else {
			worst = math.Max(worst, math.Sqrt(num))
		}
	}
	return worst
}

// TestIntersectVJPMatchesFiniteDifferences compares the VJP of every
// output (t, p, n, geo_n, uv, barycentric) with central differences of the
// float64 frozen-winner forward, on non-degenerate rays.
func TestIntersectVJPMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	worst := 0.0
	defer func() { t.Logf("worst relative error %.3g", worst) }()
	for trial := range 40 {
		c := randomCase(rng, 1+rng.IntN(5), 1+rng.IntN(8))
		for _, tape := range []bool{true, false} {
			uv := c.uv
			if !tape {
				uv = nil // recomputed by solving the hit system
			}
			g, err := IntersectVJP(c.tab, c.o, c.d, c.active, c.prim, uv, c.cot)
			require.NoError(t, err)
			vs, o, d := toF64(c.tab.Vertices), toF64(c.o), toF64(c.d)
			loss := func() float64 { return c.totalLoss(vs, o, d) }
			for name, pair := range map[string][2][]float64{
				"vertices":   {g.Vertices, central(vs, loss)},
				"origins":    {g.Origins, central(o, loss)},
				"directions": {g.Directions, central(d, loss)},
			} {
				e := relErr(pair[0], pair[1])
				require.LessOrEqual(t, e, 1e-3, "trial %d (tape %v): %s relative error %.3g", trial, tape, name, e)
				worst = math.Max(worst, e)
			}
		}
	}
}

func TestIntersectVJPSkipsMissesAndInactiveRows(t *testing.T) {
	c := randomCase(rand.New(rand.NewPCG(3, 4)), 2, 4)
	c.prim[1] = -1                      // a miss
	c.active[2] = false                 // inactive
	c.prim[3] = int32(c.tab.NumFaces()) // out of range: ignored
	g, err := IntersectVJP(c.tab, c.o, c.d, c.active, c.prim, c.uv, c.cot)
	require.NoError(t, err)
	for _, i := range []int{1, 2, 3} {
		assert.Equal(t, []float64{0, 0, 0}, g.Origins[3*i:3*i+3], "row %d", i)
		assert.Equal(t, []float64{0, 0, 0}, g.Directions[3*i:3*i+3], "row %d", i)
	}
	assert.NotEqual(t, []float64{0, 0, 0}, g.Origins[0:3])
	// Only row 0 contributes: its VJP alone gives the same vertex gradient.
	one, err := IntersectVJP(c.tab, c.o[:3], c.d[:3], nil, c.prim[:1], c.uv[:2], IntersectCotangents{
		T: c.cot.T[:1], P: c.cot.P[:3], N: c.cot.N[:3], GeoN: c.cot.GeoN[:3], UV: c.cot.UV[:2], Bary: c.cot.Bary[:3]})
	require.NoError(t, err)
	assert.Equal(t, one.Vertices, g.Vertices)
}

func TestIntersectVJPDegenerateSystemIsFinite(t *testing.T) {
	// A ray parallel to the triangle: det = 0 is floored, nothing is NaN.
	tab, err := geom.BuildTables([]geom.Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	require.NoError(t, err)
	g, err := IntersectVJP(tab, []float32{-1, .2, 0}, []float32{1, 0, 0}, nil, []int32{0}, []float32{.2, .2},
		IntersectCotangents{T: []float32{1}, GeoN: []float32{0, 0, 1}})
	require.NoError(t, err)
	for _, v := range append(append(g.Vertices, g.Origins...), g.Directions...) {
		assert.False(t, math.IsNaN(v) || math.IsInf(v, 0))
	}
}

func TestIntersectVJPLengthErrors(t *testing.T) {
	tab, _ := geom.BuildTables([]geom.Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	o, d := []float32{0, 0, 1}, []float32{0, 0, -1}
	for name, call := range map[string]func() error{
		"prim": func() error { _, e := IntersectVJP(tab, o, d, nil, nil, nil, IntersectCotangents{}); return e },
		"uv": func() error {
			_, e := IntersectVJP(tab, o, d, nil, []int32{0}, []float32{1}, IntersectCotangents{})
			return e
		},
		"cot": func() error {
			_, e := IntersectVJP(tab, o, d, nil, []int32{0}, nil, IntersectCotangents{P: []float32{1}})
			return e
		},
		"rays": func() error {
			_, e := IntersectVJP(tab, o, d[:2], nil, []int32{0}, nil, IntersectCotangents{})
			return e
		},
	} {
		assert.ErrorIs(t, call(), ErrLength, name)
	}
	g, err := IntersectVJP(tab, nil, nil, nil, nil, nil, IntersectCotangents{})
	require.NoError(t, err)
	assert.Len(t, g.Vertices, 9)
	assert.Empty(t, g.Origins)
}
