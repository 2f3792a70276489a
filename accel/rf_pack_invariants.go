package accel

import (
	"math"

	"github.com/rayd-go/rayd/rf"
)

// The float64 invariants of a packed state are what the accumulation
// kernels (rf_accum.cu) would otherwise recompute for every lane from the
// float32 inputs of the record. They are evaluated here with the kernels'
// operations in the kernels' order, each product and sum rounded on its own
// (explicit float64 conversions keep the compiler from fusing them), with
// correctly rounded division and square root and Go's math.Max / math.Min,
// which the kernels' gmax / gmin mirror, so each stored value is the one
// the kernel computed bit for bit.

// putInvariants writes the float64 invariants of state i (gain: its
// resolved material gain) into the record w.
func putInvariants(w []uint32, st *rf.DfrStates, i int, gain float32) {
	dir := [3]float64{float64(st.EdgeDir[3*i]), float64(st.EdgeDir[3*i+1]), float64(st.EdgeDir[3*i+2])}
	e := unitDir(dir)
	putF64s(w, stDirUnit, e[:]...)
	e2 := unitDir(e)
	putF64s(w, stDirUnit2, e2[:]...)
	putF64s(w, stSpan, float64(st.EdgeTMax[i])-float64(st.EdgeTMin[i]))
	putF64s(w, stPowerGain, float64(st.SrcPower[i])*float64(gain))
	putF64s(w, stWedge, wedgeFactor(st.ExteriorAngle[i]))
}

// unitDir is rf_common.cuh normalize: v·(1/√max(v·v, 1e-12)), the dot
// product summed left to right.
func unitDir(v [3]float64) [3]float64 {
	d := float64(float64(v[0]*v[0])+float64(v[1]*v[1])) + float64(v[2]*v[2])
	r := 1 / math.Sqrt(math.Max(d, 1e-12))
	return [3]float64{v[0] * r, v[1] * r, v[2] * r}
}

// wedgeFactor is the exterior-angle factor of spec §6.1's weight W:
// min(max(ext, π/4)/(2π), 2).
func wedgeFactor(ext float32) float64 {
	pi := float64(math.Pi)
	return math.Min(math.Max(float64(ext), pi/4)/(2*pi), 2)
}

// putF64s stores vs as consecutive float64 values from word k, low word
// first.
func putF64s(w []uint32, k int, vs ...float64) {
	for j, v := range vs {
		b := math.Float64bits(v)
		w[k+2*j], w[k+2*j+1] = uint32(b), uint32(b>>32)
	}
}
