package edge

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

func quadScene(t *testing.T) *Scene {
	return NewScene(mustTables(t, quadMesh(0)))
}

func TestNearestPoint(t *testing.T) {
	s := quadScene(t)
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	p := []float32{
		0.5, -1, 0, // below edge (0,1)
		-1, -1, 0, // tie between edges 0, 1, 2 at vertex 0
		0.5, 0.5, 2, // above the diagonal
		nan, 0, 0, // non-finite
		2, 2, 0, // inactive
	}
	active := []bool{true, true, true, true, false}
	r, err := s.NearestPoint(p, active)
	if err != nil {
		t.Fatal(err)
	}
	wantID := []int32{0, 0, 1, -1, -1}
	wantD := []float32{1, float32(math.Sqrt2), 2, inf, inf}
	wantT := []float32{0.5, 0, 0.5, 0, 0}
	for i := range wantID {
		if r.GlobalEdgeID[i] != wantID[i] || r.Distance[i] != wantD[i] || r.EdgeT[i] != wantT[i] {
			t.Errorf("row %d: id %d d %v t %v", i, r.GlobalEdgeID[i], r.Distance[i], r.EdgeT[i])
		}
		if r.Valid(i) != (wantID[i] >= 0) {
			t.Errorf("row %d: Valid %v", i, r.Valid(i))
		}
	}
	if r.EdgePoint[0] != 0.5 || r.EdgePoint[1] != 0 || r.EdgePoint[9] != 0 || r.ShapeID[3] != -1 || r.EdgeID[2] != 1 {
		t.Errorf("record %+v", r)
	}
	// Masking edge 0 moves the tie to edge 1; masking all edges misses.
	if err := s.SetMask([]bool{false, true, true, true, true}); err != nil {
		t.Fatal(err)
	}
	r, _ = s.NearestPoint(p[3:6], nil)
	if r.GlobalEdgeID[0] != 1 {
		t.Errorf("masked tie: id %d", r.GlobalEdgeID[0])
	}
	_ = s.SetMask(make([]bool, 5))
	r, _ = s.NearestPoint(p[:3], nil)
	if r.Valid(0) || r.Distance[0] != inf {
		t.Errorf("all masked: %+v", r)
	}
	// Empty batch.
	r, err = s.NearestPoint(nil, nil)
	if err != nil || r.Len() != 0 {
		t.Errorf("empty: %v %d", err, r.Len())
	}
}

func TestNearestPointMultiMesh(t *testing.T) {
	tri := geom.Mesh{Vertices: []float32{0, 0, 0.5, 1, 0, 0.5, 0, 1, 0.5}, Faces: []int32{0, 1, 2}, EdgesDisabled: true}
	s := NewScene(mustTables(t, quadMesh(0), tri, quadMesh(1)))
	r, err := s.NearestPoint([]float32{0.5, -0.1, 0.9, 0.5, -0.1, 0.45}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Row 0 is nearest the second quad's edge (0,1): global id 5, local 0.
	if r.GlobalEdgeID[0] != 5 || r.EdgeID[0] != 0 || r.ShapeID[0] != 2 {
		t.Errorf("row 0: %d %d %d", r.GlobalEdgeID[0], r.EdgeID[0], r.ShapeID[0])
	}
	// Row 1 ignores the disabled triangle at z = 0.5.
	if r.GlobalEdgeID[1] != 0 || r.ShapeID[1] != 0 {
		t.Errorf("row 1: %d %d", r.GlobalEdgeID[1], r.ShapeID[1])
	}
}

func TestNearestRay(t *testing.T) {
	m := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 5, 5}, Faces: []int32{0, 1, 2}}
	s := NewScene(mustTables(t, m))
	_ = s.SetMask([]bool{true, false, false}) // only edge (0,1)
	inf := float32(math.Inf(1))
	o := []float32{0.5, 1, -1, 0.5, 1, -1, 0.5, 1, -1, 0.5, 1, -1, 0.5, 1, -1}
	d := []float32{0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, -1, 0, 0, 1}
	tmax := []float32{inf, 0.5, -3, inf, float32(math.NaN())}
	r, err := s.NearestRay(o, d, tmax, nil)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id     int32
		d2, rt float64
		et     float32
	}
	want := []row{{0, 1, 1, 0.5}, {0, 1.25, 0.5, 0.5}, {0, 2, 0, 0.5}, {0, 2, 0, 0.5}, {-1, math.Inf(1), 0, 0}}
	for i, w := range want {
		gd := float64(r.Distance[i])
		if r.GlobalEdgeID[i] != w.id || math.Abs(gd*gd-w.d2) > 1e-6 || float64(r.RayT[i]) != w.rt || r.EdgeT[i] != w.et {
			t.Errorf("row %d: id %d d %v t %v s %v", i, r.GlobalEdgeID[i], r.Distance[i], r.RayT[i], r.EdgeT[i])
		}
	}
	if r.Point[2] != 0 || r.Point[5] != -0.5 || r.EdgePoint[0] != 0.5 {
		t.Errorf("points %v %v", r.Point, r.EdgePoint)
	}
	r, _ = s.NearestRay(o[:3], d[:3], nil, []bool{false})
	if r.Valid(0) || r.Distance[0] != inf {
		t.Errorf("inactive row: %+v", r)
	}
}

// sampledMin is the minimum over a dense grid of t of the point–segment
// distance, an upper bound of the true minimum.
func sampledMin(o, d vec, tmax float64, a, b vec) float64 {
	best := math.Inf(1)
	const n = 4000
	for i := range n + 1 {
		t := tmax * float64(i) / n
		_, _, d2 := pointSegment(axpy(t, d, o), a, b)
		best = min(best, d2)
	}
	return best
}

func TestRaySegmentAgainstSampling(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rv := func() vec { return vec{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()} }
	for range 300 {
		o, d, a, b := rv(), rv(), rv(), rv()
		T := rng.Float64() * 3
		tt, ss, d2 := raySegment(o, d, T, a, b)
		if tt < 0 || tt > T || ss < 0 || ss > 1 {
			t.Fatalf("parameters out of range: t %v of %v, s %v", tt, T, ss)
		}
		w := sub(axpy(tt, d, o), axpy(ss, sub(b, a), a))
		if math.Abs(dot(w, w)-d2) > 1e-12 {
			t.Fatalf("d2 %v does not match the pair %v", d2, dot(w, w))
		}
		if ref := sampledMin(o, d, T, a, b); d2 > ref+1e-12 {
			t.Fatalf("segment: d2 %v above sampled %v", d2, ref)
		}
		// Half ray: every sample up to a far bound must be no closer.
		_, _, h2 := raySegment(o, d, math.Inf(1), a, b)
		if ref := sampledMin(o, d, 50, a, b); h2 > ref+1e-12 || h2 > d2+1e-12 {
			t.Fatalf("half ray: d2 %v above sampled %v / segment %v", h2, ref, d2)
		}
	}
}

func TestNearestK(t *testing.T) {
	tb := mustTables(t, quadMesh(0), quadMesh(1))
	s := NewScene(tb)
	rng := rand.New(rand.NewPCG(3, 4))
	n := 40
	p := make([]float32, 3*n)
	for i := range p {
		p[i] = float32(rng.Float64()*3 - 1)
	}
	copy(p[:3], []float32{-1, -1, 0}) // exact tie at vertex 0
	one, err := s.NearestPoint(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 3, 10, 16} {
		r, err := s.NearestK(p, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Len() != n || r.K != k {
			t.Fatalf("shape %d×%d", r.Len(), r.K)
		}
		for i := range n {
			x := i * k
			if r.GlobalEdgeID[x] != one.GlobalEdgeID[i] || r.Distance[x] != one.Distance[i] {
				t.Fatalf("k=%d row %d: first slot %d, nearest %d", k, i, r.GlobalEdgeID[x], one.GlobalEdgeID[i])
			}
			for j := range k {
				x := i*k + j
				if j >= 10 {
					if r.Valid[x] || r.GlobalEdgeID[x] != -1 || !math.IsInf(float64(r.Distance[x]), 1) {
						t.Fatalf("k=%d row %d slot %d should be padding", k, i, j)
					}
					continue
				}
				if !r.Valid[x] || r.Point[3*x] != p[3*i] || r.Boundary[x] != s.Edges.IsBoundary(int(r.GlobalEdgeID[x])) {
					t.Fatalf("k=%d row %d slot %d: %v", k, i, j, r.Valid[x])
				}
				if j > 0 {
					prev, cur := r.Distance[x-1], r.Distance[x]
					if prev > cur || (prev == cur && r.GlobalEdgeID[x-1] > r.GlobalEdgeID[x]) {
						t.Fatalf("k=%d row %d: slots %d,%d out of order", k, i, j-1, j)
					}
				}
			}
		}
	}
	r, _ := s.NearestK(p[:3], 3, nil)
	if r.GlobalEdgeID[0] != 0 || r.GlobalEdgeID[1] != 1 || r.GlobalEdgeID[2] != 2 {
		t.Fatalf("tie order %v", r.GlobalEdgeID)
	}
	// Masked edges and inactive rows.
	mask := make([]bool, 10)
	mask[7] = true
	_ = s.SetMask(mask)
	r, _ = s.NearestK(p[:6], 2, []bool{true, false})
	if r.GlobalEdgeID[0] != 7 || r.Valid[1] || r.Valid[2] || r.Valid[3] || r.Point[3] != 0 {
		t.Fatalf("masked/inactive %+v", r)
	}
}

func TestValidation(t *testing.T) {
	s := quadScene(t)
	p := []float32{0, 0, 0}
	for _, k := range []int{0, -1, 17} {
		if _, err := s.NearestK(p, k, nil); !errors.Is(err, geom.ErrInvalidArgument) {
			t.Errorf("k=%d: %v", k, err)
		}
	}
	var le *geom.LengthError
	if _, err := s.NearestPoint([]float32{0, 0}, nil); !errors.As(err, &le) || le.Field != "p" {
		t.Errorf("p length: %v", err)
	}
	if _, err := s.NearestK(p, 1, []bool{true, true}); !errors.As(err, &le) || le.Field != "active" {
		t.Errorf("active length: %v", err)
	}
	if _, err := s.NearestRay(p, p[:2], nil, nil); !errors.As(err, &le) || le.Field != "d" {
		t.Errorf("d length: %v", err)
	}
	if _, err := s.NearestRay(p, p, []float32{1, 2}, nil); !errors.As(err, &le) || le.Field != "tmax" {
		t.Errorf("tmax length: %v", err)
	}
	if err := s.SetMask([]bool{true}); !errors.As(err, &le) || le.Field != "mask" || le.Want != 5 {
		t.Errorf("SetMask: %v", err)
	}
	s.Mask = []bool{true}
	if _, err := s.NearestPoint(p, nil); !errors.Is(err, geom.ErrLength) {
		t.Errorf("bad mask: %v", err)
	}
	s.Mask = nil
	if _, err := (&Scene{}).NearestPoint(p, nil); !errors.Is(err, geom.ErrInvalidArgument) {
		t.Errorf("nil scene: %v", err)
	}
	bad := NewScene(mustTables(t, quadMesh(0)))
	bad.Edges.V1[0] = 99
	if _, err := bad.NearestPoint(p, nil); !errors.Is(err, geom.ErrInvalidArgument) {
		t.Errorf("foreign edges: %v", err)
	}
	r, _ := s.NearestPoint(p, nil)
	if _, _, err := s.NearestPointVJP(append(p, p...), r, PointCotangent{}); !errors.Is(err, geom.ErrLength) {
		t.Errorf("VJP result length: %v", err)
	}
	if _, _, err := s.NearestPointVJP(p, r, PointCotangent{EdgeT: []float64{1, 2}}); !errors.Is(err, geom.ErrLength) {
		t.Errorf("VJP cotangent length: %v", err)
	}
}
