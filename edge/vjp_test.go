package edge

import (
	"math"
	"math/rand/v2"
	"testing"
)

// relErr is the norm-wise relative error of got against want.
func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num) / max(math.Sqrt(den), 1e-6)
}

// centralFD differentiates f at x (a flat parameter vector).
func centralFD(f func([]float64) float64, x []float64) []float64 {
	const h = 1e-6
	g := make([]float64, len(x))
	for i := range x {
		old := x[i]
		x[i] = old + h
		fp := f(x)
		x[i] = old - h
		fm := f(x)
		x[i] = old
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

func split(x []float64) (v [4]vec) {
	for i := range len(x) / 3 {
		v[i] = vec{x[3*i], x[3*i+1], x[3*i+2]}
	}
	return v
}

func TestPointVJPFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rv := func() vec { return vec{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()} }
	checked := map[bool]int{}
	for range 400 {
		p, a, b := rv(), rv(), rv()
		gDist, gQ, gT := rng.NormFloat64(), rv(), rng.NormFloat64()
		s, _, d2 := pointSegment(p, a, b)
		interior := s > 0 && s < 1
		if d2 < 1e-2 || (interior && (s < 1e-3 || s > 1-1e-3)) {
			continue
		}
		if !interior {
			// Keep away from the clamp switch: the unclamped s must sit
			// clearly outside [0,1].
			e := sub(b, a)
			u := dot(sub(p, a), e) / dot(e, e)
			if u > -1e-3 && u < 1+1e-3 {
				continue
			}
		}
		loss := func(x []float64) float64 {
			v := split(x)
			s, q, d2 := pointSegment(v[0], v[1], v[2])
			return gDist*math.Sqrt(d2) + dot(gQ, q) + gT*s
		}
		x := []float64{p[0], p[1], p[2], a[0], a[1], a[2], b[0], b[1], b[2]}
		fd := centralFD(loss, x)
		gp, ga, gb := pointVJP(p, a, b, gDist, gQ, gT)
		got := []float64{gp[0], gp[1], gp[2], ga[0], ga[1], ga[2], gb[0], gb[1], gb[2]}
		if e := relErr(got, fd); e > 1e-3 {
			t.Fatalf("interior=%v: rel err %.3g\n got %v\n fd  %v", interior, e, got, fd)
		}
		checked[interior]++
	}
	if checked[true] < 50 || checked[false] < 50 {
		t.Fatalf("too few configurations checked: %v", checked)
	}
}

func freeness(o, d vec, T float64, a, b vec) [2]bool {
	t, s, _ := raySegment(o, d, T, a, b)
	return [2]bool{t > 0 && t < T, s > 0 && s < 1}
}

func TestRayVJPFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rv := func() vec { return vec{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()} }
	checked := map[[3]bool]int{}
	for range 3000 {
		o, d, a, b := rv(), rv(), rv(), rv()
		T := math.Inf(1)
		if rng.IntN(2) == 0 {
			T = 0.2 + 2*rng.Float64()
		}
		c := rayCot{dist: rng.NormFloat64(), t: rng.NormFloat64(), s: rng.NormFloat64(),
			point: rv(), edgePoint: rv()}
		_, _, d2 := raySegment(o, d, T, a, b)
		if d2 < 1e-2 {
			continue
		}
		x := []float64{o[0], o[1], o[2], d[0], d[1], d[2], a[0], a[1], a[2], b[0], b[1], b[2]}
		// Skip configurations whose free/clamped pattern changes within a
		// small perturbation: there the closest pair is not differentiable.
		base := freeness(o, d, T, a, b)
		stable := true
		for i := range x {
			for _, h := range []float64{-1e-3, 1e-3} {
				x[i] += h
				v := split(x)
				if freeness(v[0], v[1], T, v[2], v[3]) != base {
					stable = false
				}
				x[i] -= h
			}
		}
		if !stable {
			continue
		}
		loss := func(x []float64) float64 {
			v := split(x)
			t, s, d2 := raySegment(v[0], v[1], T, v[2], v[3])
			p := axpy(t, v[1], v[0])
			q := axpy(s, sub(v[3], v[2]), v[2])
			return c.dist*math.Sqrt(d2) + c.t*t + dot(c.point, p) + c.s*s + dot(c.edgePoint, q)
		}
		fd := centralFD(loss, x)
		go_, gd, ga, gb := rayVJP(o, d, T, a, b, c)
		got := []float64{go_[0], go_[1], go_[2], gd[0], gd[1], gd[2], ga[0], ga[1], ga[2], gb[0], gb[1], gb[2]}
		key := [3]bool{base[0], base[1], math.IsInf(T, 1)}
		if e := relErr(got, fd); e > 1e-3 {
			t.Fatalf("pattern %v: rel err %.3g\n got %v\n fd  %v", key, e, got, fd)
		}
		checked[key]++
	}
	for _, key := range [][3]bool{
		{true, true, true}, {true, true, false}, // interior pair
		{false, true, true}, {false, true, false}, // a query end against the edge
		{true, false, true}, {true, false, false}, // an edge end against the query
		{false, false, false}, // end against end
	} {
		if checked[key] < 10 {
			t.Errorf("pattern %v checked only %d times (%v)", key, checked[key], checked)
		}
	}
}

// Translating every input by δ moves both closest points by δ and leaves
// distance and parameters unchanged, so the gradients of the query and of
// the vertices must add up to the cotangents of the two points.
func TestVJPScatter(t *testing.T) {
	s := NewScene(mustTables(t, quadMesh(0), quadMesh(1)))
	p := []float32{0.3, -0.4, 0.2, 0.5, 0.5, 3, 1.7, 0.2, 0.8, 9, 9, 9}
	r, err := s.NearestPoint(p, []bool{true, true, true, false})
	if err != nil {
		t.Fatal(err)
	}
	g := PointCotangent{Distance: []float64{1, 2, 3, 4}, EdgeT: []float64{0.5, -1, 2, 1},
		EdgePoint: []float64{1, 2, 3, -1, 0, 1, 0.5, 0.5, 0.5, 7, 7, 7}}
	dp, dv, err := s.NearestPointVJP(p, r, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(dv) != 3*s.Tables.NumVertices() {
		t.Fatalf("len(dv) = %d", len(dv))
	}
	var sum, want vec
	for i := range 3 {
		for k := range 3 {
			sum[k] += dp[3*i+k]
			want[k] += g.EdgePoint[3*i+k]
		}
	}
	for v := range s.Tables.NumVertices() {
		for k := range 3 {
			sum[k] += dv[3*v+k]
		}
	}
	if dp[9] != 0 || dp[10] != 0 || dp[11] != 0 || relErr(sum[:], want[:]) > 1e-9 {
		t.Fatalf("point scatter: sum %v want %v, inactive %v", sum, want, dp[9:])
	}

	o := []float32{0.5, -1, 0.5, 0.2, 0.3, 2, 2, 0.5, 0.5}
	d := []float32{0.1, 1, 0.05, 0.3, 0.1, -1, -1, 0.02, 0.1}
	tmax := []float32{float32(math.Inf(1)), 0.7, 5}
	rr, err := s.NearestRay(o, d, tmax, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := RayCotangent{Distance: []float64{1, -2, 0.5}, RayT: []float64{0.3, 0.1, -0.2},
		Point: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, EdgeT: []float64{1, 1, 1},
		EdgePoint: []float64{0, 1, 1, 1, 0, 1, 1, 1, 0}}
	do, dd, dv, err := s.NearestRayVJP(o, d, tmax, rr, rc)
	if err != nil {
		t.Fatal(err)
	}
	sum, want = vec{}, vec{}
	for i := range 3 {
		for k := range 3 {
			sum[k] += do[3*i+k]
			want[k] += rc.Point[3*i+k] + rc.EdgePoint[3*i+k]
		}
	}
	for v := range s.Tables.NumVertices() {
		for k := range 3 {
			sum[k] += dv[3*v+k]
		}
	}
	if relErr(sum[:], want[:]) > 1e-9 || len(dd) != 9 {
		t.Fatalf("ray scatter: sum %v want %v", sum, want)
	}
	// Each row's gradient matches the kernel on the frozen edge.
	for i := range 3 {
		id := rr.GlobalEdgeID[i]
		a, b := s.endpoints(int(id))
		oi, _ := load3(o, i)
		di, _ := load3(d, i)
		T, _ := rayLimit(tmax, i)
		_, gd, _, _ := rayVJP(oi, di, T, a, b, rayCot{dist: rc.Distance[i], t: rc.RayT[i],
			point: row3(rc.Point, i), s: rc.EdgeT[i], edgePoint: row3(rc.EdgePoint, i)})
		if relErr(dd[3*i:3*i+3], gd[:]) > 1e-12 {
			t.Fatalf("row %d: dd %v want %v", i, dd[3*i:3*i+3], gd)
		}
	}
}
