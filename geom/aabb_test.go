package geom

import (
	"math"
	"testing"
)

func TestReciprocal(t *testing.T) {
	got := Reciprocal([3]float32{2, 1e-21, float32(math.Copysign(0, -1))})
	if got[0] != .5 || got[1] != 1e20 || got[2] != -1e20 {
		t.Fatalf("Reciprocal = %v", got)
	}
	if r := Reciprocal([3]float32{-1e-20, -3e-21, 4}); r[0] != float32(1/float32(-1e-20)) || r[1] != -1e20 || r[2] != .25 {
		t.Fatalf("Reciprocal = %v", r)
	}
}

func TestRayAABB(t *testing.T) {
	lo := [3]float32{0, 0, 0}
	hi := [3]float32{1, 1, 1}
	cases := []struct {
		name       string
		o, d       [3]float32
		tmin, tcap float32
		hit        bool
		near, far  float32
	}{
		{"straight through", [3]float32{.5, .5, -1}, [3]float32{0, 0, 1}, 0, 10, true, 1, 2},
		{"axis parallel outside", [3]float32{2, .5, -1}, [3]float32{0, 0, 1}, 0, 10, false, 0, 0},
		{"capped before box", [3]float32{.5, .5, -1}, [3]float32{0, 0, 1}, 0, .5, false, 0, 0},
		{"cap touches face", [3]float32{.5, .5, -1}, [3]float32{0, 0, 1}, 0, 1, true, 1, 1},
		{"origin inside", [3]float32{.5, .5, .5}, [3]float32{1, 1, 1}, 1e-6, 10, true, 1e-6, .5},
		{"behind", [3]float32{.5, .5, 2}, [3]float32{0, 0, 1}, 0, 10, false, 0, 0},
		{"diagonal", [3]float32{-1, -1, -1}, [3]float32{1, 1, 1}, 0, 10, true, 1, 2},
		{"on face plane", [3]float32{0, .5, -1}, [3]float32{0, 0, 2}, 0, 10, true, .5, 1},
	}
	for _, c := range cases {
		n, f, hit := RayAABB(c.o, Reciprocal(c.d), lo, hi, c.tmin, c.tcap)
		if hit != c.hit || (hit && (n != c.near || f != c.far)) {
			t.Errorf("%s: got (%g, %g, %v), want (%g, %g, %v)", c.name, n, f, hit, c.near, c.far, c.hit)
		}
	}
}

func TestFminfFmaxfNaN(t *testing.T) {
	nan := float32(math.NaN())
	if Fminf(nan, 1) != 1 || Fminf(1, nan) != 1 || Fmaxf(nan, 2) != 2 || Fmaxf(2, nan) != 2 {
		t.Error("NaN operand must yield the other")
	}
	if Fminf(1, 2) != 1 || Fmaxf(1, 2) != 2 {
		t.Error("ordering")
	}
}

func TestFaceNormalAndInterpolate(t *testing.T) {
	n := FaceNormal(unit0, unit1, unit2, NormalFloor)
	if n != [3]float32{0, 0, 1} {
		t.Fatalf("unit normal %v", n)
	}
	n = FaceNormal(unit0, unit2, [3]float32{3, 0, 0}, NormalFloor)
	if n != [3]float32{0, 0, -1} {
		t.Fatalf("flipped winding %v", n)
	}
	if n = FaceNormal(unit1, unit1, unit1, NormalFloor); n != [3]float32{} {
		t.Fatalf("degenerate %v", n)
	}
	p := Interpolate([3]float32{1, 1, 1}, [3]float32{3, 1, 1}, [3]float32{1, 5, 1}, .25, .5)
	if p != [3]float32{1.5, 3, 1} {
		t.Fatalf("Interpolate %v", p)
	}
	if r := Rsqrt(4); r != .5 {
		t.Fatalf("Rsqrt(4) = %g", r)
	}
	if !IsFinite3([3]float32{1, 2, 3}) || IsFinite3([3]float32{1, float32(math.Inf(1)), 3}) {
		t.Error("IsFinite3")
	}
}
