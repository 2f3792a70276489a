package accel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/rf"
)

// rn is IEEE binary64 arithmetic with one rounding per operation (to
// nearest, ties to even), evaluated by math/big: the device's __dadd_rn,
// __dmul_rn, __ddiv_rn and __dsqrt_rn, with no fused multiply-add anywhere.
func rn(op func(z, x, y *big.Float) *big.Float, x, y float64) float64 {
	z := new(big.Float).SetPrec(53).SetMode(big.ToNearestEven)
	r, _ := op(z, big.NewFloat(x), big.NewFloat(y)).Float64()
	return r
}

func rnAdd(x, y float64) float64 { return rn((*big.Float).Add, x, y) }
func rnMul(x, y float64) float64 { return rn((*big.Float).Mul, x, y) }
func rnDiv(x, y float64) float64 { return rn((*big.Float).Quo, x, y) }
func rnSqrt(x float64) float64 {
	r, _ := new(big.Float).SetPrec(53).SetMode(big.ToNearestEven).Sqrt(big.NewFloat(x)).Float64()
	return r
}

// deviceNormalize is rf_common.cuh normalize step by step.
func deviceNormalize(v [3]float64) [3]float64 {
	d := rnAdd(rnAdd(rnMul(v[0], v[0]), rnMul(v[1], v[1])), rnMul(v[2], v[2]))
	r := rnDiv(1, rnSqrt(math.Max(d, 1e-12)))
	return [3]float64{rnMul(v[0], r), rnMul(v[1], r), rnMul(v[2], r)}
}

func wordF64(w []uint32, k int) float64 {
	return math.Float64frombits(uint64(w[k]) | uint64(w[k+1])<<32)
}

// TestPackedInvariantsEqualTheKernelArithmetic: the float64 invariants of
// every packed record equal the kernels' per-lane expressions evaluated
// with one rounding per operation, bit for bit, over random and degenerate
// states (zero, tiny and huge directions, reversed and equal spans, angles
// on both sides of the wedge clamps).
func TestPackedInvariantsEqualTheKernelArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	st := &rf.DfrStates{}
	add := func(dir [3]float32, tmin, tmax, ext, power float32) {
		st.EdgeIndex = append(st.EdgeIndex, int32(len(st.EdgeIndex)))
		st.Prim0, st.Prim1 = append(st.Prim0, -1), append(st.Prim1, -1)
		st.EdgePos, st.EdgeDir = append(st.EdgePos, 0, 0, 0), append(st.EdgeDir, dir[:]...)
		st.N0, st.N1, st.Src = append(st.N0, 0, 0, 1), append(st.N1, 0, 1, 0), append(st.Src, 1, 2, 3)
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, tmin), append(st.EdgeTMax, tmax)
		st.ExteriorAngle, st.SrcPower = append(st.ExteriorAngle, ext), append(st.SrcPower, power)
	}
	add([3]float32{0, 0, 0}, 0, 0, 0, 1)
	add([3]float32{1e-30, 0, 0}, 1, -1, math.Pi/4, 0)
	add([3]float32{3e30, -4e30, 1}, -1e30, 1e30, 100, 1e30)
	add([3]float32{1, 1, 1}, -0.1, 0.7, 1.5*math.Pi, 2)
	for range 2000 {
		f := func() float32 { return float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3))) }
		add([3]float32{f(), f(), f()}, f(), f(), float32(rng.Float64()*15), float32(rng.Float64()*10))
	}
	n := len(st.EdgeIndex)
	m := rf.DefaultMaterial(1)
	m.Gain[0] = 0.37
	for i := range n {
		st.Prim0[i] = int32(i % 2) // even states take row 0's gain 0.37, odd ones the default 1
	}
	w := PackDfrStates(st, n, m, nil, 1, func(int) (a, b, c [3]float32) { return })
	pi := float64(math.Pi)
	for i := range n {
		r := w[i*DfrStateWords : (i+1)*DfrStateWords]
		f := func(k int) float64 { return float64(math.Float32frombits(r[k])) }
		e := deviceNormalize([3]float64{f(stDir), f(stDir + 1), f(stDir + 2)})
		e2 := deviceNormalize(e)
		for k := range 3 {
			require.Equal(t, math.Float64bits(e[k]), math.Float64bits(wordF64(r, stDirUnit+2*k)), "state %d dir[%d]", i, k)
			require.Equal(t, math.Float64bits(e2[k]), math.Float64bits(wordF64(r, stDirUnit2+2*k)), "state %d dir2[%d]", i, k)
		}
		require.Equal(t, math.Float64bits(rnAdd(f(stTMax), -f(stTMin))), math.Float64bits(wordF64(r, stSpan)), "state %d span", i)
		require.Equal(t, math.Float64bits(rnMul(f(stPower), f(stGain))), math.Float64bits(wordF64(r, stPowerGain)), "state %d power·gain", i)
		wedge := math.Min(rnDiv(math.Max(f(stExt), rnDiv(pi, 4)), rnMul(2, pi)), 2)
		require.Equal(t, math.Float64bits(wedge), math.Float64bits(wordF64(r, stWedge)), "state %d wedge", i)
	}
	require.Equal(t, float32(0.37), math.Float32frombits(w[stGain]))
	require.Zero(t, w[60]|w[61]|w[62]|w[63], "padding words")
}

// TestDfrDirectCallsSplitWindowsByLaneKind: a window is split at D and
// D+K into windows of one lane kind each, run by that kind's kernel, with
// its lane offset and count in the arguments; empty windows are left out.
func TestDfrDirectCallsSplitWindowsByLaneKind(t *testing.T) {
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: 2}, sms: 4}
	g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 2, Res1: 2}
	o := rf.AccumOptions{DirectSamples: 100, KellerSamples: 5, SuffixSamples: 5}
	type call struct {
		entry      string
		off, lanes int
	}
	for _, c := range []struct {
		d, k, x, off, count int
		want                []call
	}{
		{100, 5, 5, 0, 100, []call{{"rf_accum_direct_only", 0, 100}}},
		{100, 5, 5, 99, 1, []call{{"rf_accum_direct_only", 99, 1}}},
		{100, 5, 5, 99, 2, []call{{"rf_accum_direct_only", 99, 1}, {"rf_accum_keller", 100, 1}}},
		{100, 5, 5, 100, 5, []call{{"rf_accum_keller", 100, 5}}},
		{100, 5, 5, 0, 110, []call{{"rf_accum_direct_only", 0, 100}, {"rf_accum_keller", 100, 5}, {"rf_accum_suffix", 105, 5}}},
		{100, 5, 5, 104, 3, []call{{"rf_accum_keller", 104, 1}, {"rf_accum_suffix", 105, 2}}},
		{100, 0, 5, 50, 55, []call{{"rf_accum_direct_only", 50, 50}, {"rf_accum_suffix", 100, 5}}},
		{0, 5, 0, 0, 5, []call{{"rf_accum_keller", 0, 5}}},
		{100, 5, 5, 0, 0, nil},
	} {
		o.DirectSamples, o.KellerSamples, o.SuffixSamples, o.LaneOffset, o.LaneCount = c.d, c.k, c.x, c.off, c.count
		calls, _ := b.dfrDirectCalls(DfrAccumLaunch{States: buf[uint32](), NumStates: 3, Grid: g, Options: o}, 4)
		var got []call
		for _, k := range calls {
			// lane_offset and lane_count follow the sample counts and the seed.
			n := len(k.args)
			got = append(got, call{k.entry, int(k.args[n-3].(int32)), int(k.args[n-2].(int32))})
			require.Equal(t, k.lanes, int(k.args[n-2].(int32)))
		}
		require.Equal(t, c.want, got, "D %d K %d X %d window (%d, %d)", c.d, c.k, c.x, c.off, c.count)
	}
}
