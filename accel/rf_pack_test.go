package accel

import (
	"math"
	"testing"

	"github.com/rayd-go/rayd/rf"
)

func TestPackDfrStatesResolvesMaterialAndSuffixCandidates(t *testing.T) {
	// Scene of 3 faces; the material has 4 rows (row 3 is no scene face) and
	// row 2 invalid.
	m := &rf.DfrMaterial{EtaR: []float32{2, 3, 4, 5}, Sigma: []float32{0.1, 0.2, 0.3, 0.4}, MuR: []float32{1, 1, 1, 1},
		Gain: []float32{0.5, -1, 2, 3}, Valid: []bool{true, true, false, true}}
	prims := [][2]int32{{0, 1}, {1, 1}, {-1, 0}, {2, 1}, {3, 0}, {2, 2}, {7, -1}}
	st := &rf.DfrStates{}
	for i, p := range prims {
		st.EdgeIndex = append(st.EdgeIndex, int32(10+i))
		st.Prim0, st.Prim1 = append(st.Prim0, p[0]), append(st.Prim1, p[1])
		for range 3 {
			st.EdgePos, st.EdgeDir = append(st.EdgePos, 1), append(st.EdgeDir, 2)
			st.N0, st.N1, st.Src = append(st.N0, 3), append(st.N1, 4), append(st.Src, 5)
		}
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, -1), append(st.EdgeTMax, 1)
		st.ExteriorAngle, st.SrcPower = append(st.ExteriorAngle, 4), append(st.SrcPower, 0.5)
	}
	tri := func(f int) (a, b, c [3]float32) {
		v := float32(f)
		return [3]float32{v, 0, 0}, [3]float32{0, v, 0}, [3]float32{0, 0, v}
	}
	want := []struct {
		gain  float32
		faces []int32
		gains []float32
		mat   [2]bool
	}{
		{0.5, []int32{0, 1}, []float32{0.5, 0}, [2]bool{true, true}},
		{0, []int32{1}, []float32{0}, [2]bool{true, true}},
		{0.5, []int32{0}, []float32{0.5}, [2]bool{false, true}},
		{0, []int32{1}, []float32{0}, [2]bool{false, true}},
		{3, []int32{0}, []float32{0.5}, [2]bool{true, true}},
		{1, nil, nil, [2]bool{false, false}},
		{1, nil, nil, [2]bool{false, false}},
	}
	for _, active := range [][]bool{nil, {false}, {true, false, true, false, true, false, true}} {
		w := PackDfrStates(st, len(prims), m, active, 3, tri)
		for i, exp := range want {
			r := w[i*DfrStateWords : (i+1)*DfrStateWords]
			f := func(k int) float32 { return math.Float32frombits(r[k]) }
			if f(stGain) != exp.gain || int32(r[stEdge]) != int32(10+i) || f(stTMin) != -1 || f(stPower) != 0.5 || f(stSrc+2) != 5 {
				t.Errorf("state %d: gain %v, edge %d", i, f(stGain), int32(r[stEdge]))
			}
			if int(r[stSuffixN]) != len(exp.faces) {
				t.Fatalf("state %d: %d suffix candidates, want %v", i, r[stSuffixN], exp.faces)
			}
			for k, face := range exp.faces {
				if int32(r[stSuffixFace+k]) != face || f(stSuffixGain+k) != exp.gains[k] || f(stSuffixTri+9*k) != float32(face) {
					t.Errorf("state %d slot %d: face %d gain %v", i, k, int32(r[stSuffixFace+k]), f(stSuffixGain+k))
				}
			}
			for k := range 2 {
				if (r[stFaceMat+5*k] == 1) != exp.mat[k] {
					t.Errorf("state %d: UTD face %d present = %d", i, k, r[stFaceMat+5*k])
				}
			}
			if r[stFaceMat] == 1 && f(stFaceMat+1) != m.EtaR[prims[i][0]] {
				t.Errorf("state %d: face 0 eta %v", i, f(stFaceMat+1))
			}
			act := len(active) == 0 || (len(active) == 1 && active[0]) || (len(active) > 1 && active[i])
			if (r[stActive] == 1) != act {
				t.Errorf("state %d: active %d, want %v", i, r[stActive], act)
			}
		}
	}
	// Default material: every scene face valid with gain 1.
	w := PackDfrStates(st, 1, nil, nil, 3, tri)
	if math.Float32frombits(w[stGain]) != 1 || w[stSuffixN] != 2 || math.Float32frombits(w[stFaceMat+1]) != 1 {
		t.Errorf("default material: %v", w[:DfrStateWords])
	}
	mw := PackFaceMaterial(m, 4)
	if mw[5*2+4] != 0 || mw[5*3+3] != 3 || PackFaceMaterial(nil, 2)[5+4] != 1 {
		t.Errorf("face material rows: %v", mw)
	}
}
