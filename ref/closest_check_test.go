package ref

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// independentDist2 is the squared distance from p to triangle (a, b, c) by
// another route than closestOnTriangle: the projection onto the plane when
// it falls inside (sign tests on the normal), else the nearest of the three
// edges.
func independentDist2(p, a, b, c pvec) float64 {
	seg := func(x, y pvec) float64 {
		e, w := psub(y, x), psub(p, x)
		t := 0.0
		if l := e[0]*e[0] + e[1]*e[1] + e[2]*e[2]; l > 0 {
			t = math.Min(math.Max((w[0]*e[0]+w[1]*e[1]+w[2]*e[2])/l, 0), 1)
		}
		d := 0.0
		for k := range 3 {
			r := w[k] - t*e[k]
			d += r * r
		}
		return d
	}
	best := math.Min(seg(a, b), math.Min(seg(b, c), seg(c, a)))
	n := cross64(psub(b, a), psub(c, a))
	nn := dot64(n, n)
	if nn == 0 {
		return best
	}
	h := dot64(psub(p, a), n) / nn
	q := psub(p, pvec{h * n[0], h * n[1], h * n[2]})
	inside := true
	for _, e := range [3][2]pvec{{a, b}, {b, c}, {c, a}} {
		if dot64(cross64(psub(e[1], e[0]), psub(q, e[0])), n) < 0 {
			inside = false
		}
	}
	if inside {
		best = math.Min(best, h*h*nn)
	}
	return best
}

// checkIndependently asserts, row by row, that the reported distance is
// the distance to the reported point, that the point is the barycentric
// combination of the face's vertices, and that no face is nearer than the
// reported distance (by independentDist2, up to rounding); a miss must
// have no face within maxDist.
func checkIndependently(t *testing.T, name string, tb *geom.Tables, pts []float32, md float32, active []bool, c *geom.ClosestPoints) {
	t.Helper()
	mag := 0.0
	for _, v := range tb.Vertices {
		mag = max(mag, math.Abs(float64(v)))
	}
	for i := range c.Len() {
		p := widen(row3(pts, i))
		if !active[i] {
			require.False(t, c.Valid(i), "%s: inactive row %d", name, i)
			continue
		}
		m := max(mag, math.Abs(p[0]), math.Abs(p[1]), math.Abs(p[2]))
		tol := 1e-5 * m
		truth := math.Inf(1)
		for f := range tb.NumFaces() {
			a, b, cc := tb.Triangle(f)
			truth = math.Min(truth, independentDist2(p, widen(a), widen(b), widen(cc)))
		}
		if !c.Valid(i) {
			require.True(t, md > 0 && math.Sqrt(truth) > float64(md)-tol, "%s row %d: missed a face at %v within %v", name, i, math.Sqrt(truth), md)
			continue
		}
		d := float64(c.Dist[i])
		require.InDelta(t, math.Sqrt(truth), d, tol, "%s row %d: no face may be nearer", name, i)
		q := widen(row3(c.Point, i))
		require.InDelta(t, d, math.Sqrt(pdist2(p, q)), tol, "%s row %d: distance to the point", name, i)
		f := int(c.GlobalFaceID[i])
		require.Equal(t, tb.FaceShape[f], c.ShapeID[i])
		require.Equal(t, tb.FaceLocal[f], c.LocalFaceID[i])
		a, b, cc := tb.Triangle(f)
		w := widen(row3(c.Bary, i))
		require.InDelta(t, 1, w[0]+w[1]+w[2], 1e-6, "%s row %d: weights %v", name, i, w)
		for k := range 3 {
			require.GreaterOrEqual(t, w[k], 0.0)
			comb := w[0]*float64(a[k]) + w[1]*float64(b[k]) + w[2]*float64(cc[k])
			require.InDelta(t, q[k], comb, tol, "%s row %d: point vs weights", name, i)
		}
	}
}

func TestClosestPointsValidation(t *testing.T) {
	s, _ := scenes(t, unitTriangle)
	v6 := make([]float32, 6)
	for _, c := range []struct {
		name      string
		pts       []float32
		active    []bool
		field     string
		want, got int
	}{
		{"points", v6[:5], nil, "points", -1, 5},
		{"active", v6, []bool{true}, "active", 2, 1},
	} {
		r, err := s.ClosestPoints(c.pts, 1, c.active)
		var le *LengthError
		require.Nil(t, r)
		require.ErrorIs(t, err, geom.ErrLength, c.name)
		require.ErrorIs(t, err, ErrLength, c.name)
		require.True(t, errors.As(err, &le), c.name)
		assert.Equal(t, LengthError{Field: c.field, Want: c.want, Got: c.got, PerRow: map[string]int{"points": 3, "active": 1}[c.field]}, *le)
	}
	r, err := s.ClosestPoints(v6, float32(math.NaN()), nil)
	var ae *ArgumentError
	require.Nil(t, r)
	require.ErrorIs(t, err, geom.ErrInvalidArgument)
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, "maxDist", ae.Field)
	assert.NotErrorIs(t, err, geom.ErrLength)

	// Validation comes before the context.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.ClosestPointsContext(ctx, v6, float32(math.NaN()), nil)
	require.ErrorIs(t, err, geom.ErrInvalidArgument)
	r, err = s.ClosestPointsContext(ctx, v6, 1, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, r)
}

// A 20 ms deadline on deadlineRows closest points returns
// context.DeadlineExceeded within 50 ms.
func TestClosestPointsHonoursADeadline(t *testing.T) {
	s, pts, _ := cancelScene(t, deadlineRows)
	withinBound(t, 50*time.Millisecond, func() time.Duration {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		c, err := s.ClosestPointsContext(ctx, pts, 0, nil)
		el := time.Since(t0)
		if !errors.Is(err, context.DeadlineExceeded) || c != nil {
			t.Fatalf("after %v: record %v, error %v; want context.DeadlineExceeded", el, c != nil, err)
		}
		return el
	})
	// The same call without a deadline completes: every point is 1 above the grid.
	small := 1 << 12
	c, err := s.ClosestPointsContext(t.Context(), pts[:3*small], 0, nil)
	require.NoError(t, err)
	assert.Equal(t, float32(1), c.Dist[0])
	assert.Equal(t, float32(1), c.Dist[small-1])
}

// closestOnTriangle on degenerate and thin triangles: finite weights in
// [0, 1] summing to 1, and the distance of the independent route.
func TestClosestOnDegenerateTriangles(t *testing.T) {
	r := newRand(t)
	for range 2000 {
		var tri [3]pvec
		base := pvec{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		dir := pvec{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		for j := range 3 {
			s := float64(r.IntN(5)-2) / 2
			for k := range 3 {
				off := 0.0
				if r.IntN(3) == 0 {
					off = r.NormFloat64() * 1e-6
				}
				tri[j][k] = float64(float32(base[k] + s*dir[k] + off))
			}
		}
		p := pvec{float64(float32(r.NormFloat64() * 2)), float64(float32(r.NormFloat64() * 2)), float64(float32(r.NormFloat64() * 2))}
		got := closestOnTriangle(p, tri[0], tri[1], tri[2])
		sum := 0.0
		for k := range 3 {
			require.True(t, got.bary[k] >= 0 && got.bary[k] <= 1, "weights %v of %v", got.bary, tri)
			sum += got.bary[k]
		}
		require.InDelta(t, 1, sum, 1e-12)
		require.InDelta(t, math.Sqrt(independentDist2(p, tri[0], tri[1], tri[2])), math.Sqrt(got.d2), 1e-6, "%v from %v", tri, p)
		require.Equal(t, pdist2(p, got.q), got.d2)
	}
	// A segment: the nearest point lies on the hull of the three vertices.
	got := closestOnTriangle(pvec{1.5, 1, 0}, pvec{0, 0, 0}, pvec{1, 0, 0}, pvec{2, 0, 0})
	assert.Equal(t, pvec{1.5, 0, 0}, got.q)
	assert.Equal(t, 1.0, got.d2)
	// A point.
	got = closestOnTriangle(pvec{0, 0, 2}, pvec{1, 1, 1}, pvec{1, 1, 1}, pvec{1, 1, 1})
	assert.Equal(t, pvec{1, 1, 1}, got.q)
	assert.Equal(t, 3.0, got.d2)
}
