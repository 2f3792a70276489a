package accel

import (
	"math"

	"github.com/rayd-go/rayd/rf"
)

// The float64 per-state invariants of the RF kernels, computed here once per
// state with the kernels' operations (rf_common.cuh, rf_accum.cu) in the
// same order, so that the values a lane reads are the ones it used to
// compute: every product and sum rounded on its own (explicit float64
// conversions keep the compiler from fusing them), square roots and
// divisions correctly rounded, max and min with Go's (and the kernels')
// ±Inf and NaN rules.

// unit3 is rf_common.cuh's normalize: v·(1/√max(|v|², 1e-12)).
func unit3(v [3]float64) [3]float64 {
	d := float64(float64(v[0]*v[0])+float64(v[1]*v[1])) + float64(v[2]*v[2])
	k := 1 / math.Sqrt(math.Max(d, 1e-12))
	return [3]float64{v[0] * k, v[1] * k, v[2] * k}
}

// stateInvariants returns normalize(dir), normalize(normalize(dir)),
// tmax − tmin and min(max(ext, π/4)/(2π), 2) of state i.
func stateInvariants(st *rf.DfrStates, i int) (unit, unit2 [3]float64, length, wedge float64) {
	dir := [3]float64{float64(st.EdgeDir[3*i]), float64(st.EdgeDir[3*i+1]), float64(st.EdgeDir[3*i+2])}
	unit = unit3(dir)
	unit2 = unit3(unit)
	length = float64(st.EdgeTMax[i]) - float64(st.EdgeTMin[i])
	wedge = math.Min(math.Max(float64(st.ExteriorAngle[i]), math.Pi/4)/(2*math.Pi), 2)
	return unit, unit2, length, wedge
}

// putF64 stores x at words k (low half) and k+1 (high half).
func putF64(w []uint32, k int, x float64) {
	b := math.Float64bits(x)
	w[k], w[k+1] = uint32(b), uint32(b>>32)
}

// putStateInvariants writes state i's invariants into its record w.
func putStateInvariants(w []uint32, st *rf.DfrStates, i int) {
	unit, unit2, length, wedge := stateInvariants(st, i)
	for k := range 3 {
		putF64(w, stUnit+2*k, unit[k])
		putF64(w, stUnit2+2*k, unit2[k])
	}
	putF64(w, stLen, length)
	putF64(w, stWedge, wedge)
}
