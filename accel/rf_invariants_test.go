package accel

import (
	"math"
	"testing"

	"github.com/rayd-go/rayd/rf"
)

// getF64 reads the float64 at words k, k+1 of a packed record.
func getF64(w []uint32, k int) float64 {
	return math.Float64frombits(uint64(w[k]) | uint64(w[k+1])<<32)
}

// TestPackDfrStatesInvariants: the packed float64 invariants are the unit
// direction (parallel to dir, unit length; the zero vector stays zero, a
// vector below the 1e-12 floor is scaled by 1e6), its renormalization,
// tmax − tmin exactly and the wedge factor clamped to [1/8, 2].
func TestPackDfrStatesInvariants(t *testing.T) {
	dirs := [][3]float32{{3, 4, 0}, {1, 1, 1}, {0, 0, 0}, {1e-7, 0, 0}, {-2e20, 3e20, 1}, {0, -5, 1e-30}}
	exts := []float32{math.Pi, 0, 100, 1.5 * math.Pi, float32(math.Inf(1)), 4 * math.Pi}
	half := func(x float32) float64 { return float64(x) / (2 * math.Pi) } // ext/(2π) for a float32 ext
	wantWedge := []float64{half(math.Pi), 0.125, 2, half(1.5 * math.Pi), 2, 2}
	st := &rf.DfrStates{}
	for i, d := range dirs {
		st.EdgeIndex = append(st.EdgeIndex, int32(i))
		st.EdgePos, st.EdgeDir = append(st.EdgePos, 0, 0, 0), append(st.EdgeDir, d[:]...)
		st.N0, st.N1, st.Src = append(st.N0, 0, 0, 1), append(st.N1, 1, 0, 0), append(st.Src, 0, 0, 1)
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, float32(-0.1*float64(i))), append(st.EdgeTMax, 0.3)
		st.Prim0, st.Prim1 = append(st.Prim0, -1), append(st.Prim1, -1)
		st.ExteriorAngle, st.SrcPower = append(st.ExteriorAngle, exts[i]), append(st.SrcPower, 1)
	}
	w := PackDfrStates(st, len(dirs), nil, nil, 0, nil)
	for i, d := range dirs {
		r := w[i*DfrStateWords : (i+1)*DfrStateWords]
		var u, u2 [3]float64
		var n2, dot float64
		for k := range 3 {
			u[k], u2[k] = getF64(r, stUnit+2*k), getF64(r, stUnit2+2*k)
			n2 += u[k] * u[k]
			dot += u[k] * float64(d[k])
		}
		dn := math.Sqrt(float64(d[0])*float64(d[0]) + float64(d[1])*float64(d[1]) + float64(d[2])*float64(d[2]))
		switch {
		case dn == 0:
			if u != [3]float64{} || u2 != [3]float64{} {
				t.Errorf("state %d: zero direction gives %v %v", i, u, u2)
			}
		case dn*dn < 1e-12:
			if u[0] != float64(d[0])*1e6 {
				t.Errorf("state %d: below the floor %v, want dir·1e6", i, u)
			}
		default:
			if math.Abs(n2-1) > 1e-15 || math.Abs(dot-dn) > 1e-15*dn || math.Abs(u2[0]-u[0]) > 1e-15 {
				t.Errorf("state %d: unit %v (|u|² %v, u·d %v of %v), renormalized %v", i, u, n2, dot, dn, u2)
			}
		}
		if got, want := getF64(r, stLen), float64(float32(0.3))-float64(float32(-0.1*float64(i))); got != want {
			t.Errorf("state %d: length %v, want %v", i, got, want)
		}
		if got := getF64(r, stWedge); math.Abs(got-wantWedge[i]) > 1e-16 {
			t.Errorf("state %d: wedge %v, want %v", i, got, wantWedge[i])
		}
		for k := stWedge + 2; k < DfrStateWords; k++ {
			if r[k] != 0 {
				t.Errorf("state %d: spare word %d = %#x", i, k, r[k])
			}
		}
	}
}
