package rf

import (
	"errors"
	"math"
	"testing"

	"github.com/rayd-go/rayd/geom"
)

// FuzzResolveWindow: any window gives a lane count inside the lane space or
// a typed ErrLaneWindow.
func FuzzResolveWindow(f *testing.F) {
	f.Add(0, -1, 100)
	f.Add(64, 32, 100)
	f.Add(-1, 5, 10)
	f.Add(5, 10, 10)
	f.Fuzz(func(t *testing.T, offset, count, total int) {
		if total < 0 || total > 1<<40 {
			return
		}
		n, err := ResolveWindow(offset, count, total)
		if err != nil {
			if !errors.Is(err, ErrLaneWindow) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if n < 0 || offset < 0 || offset+n > total {
			t.Fatalf("window (%d, %d) of %d resolved to %d lanes", offset, count, total, n)
		}
	})
}

// FuzzAccumDfrDirectInputs: arbitrary grid, options and state counts end in
// a result or a typed validation error, never a panic; accepted results have
// non-negative counters and finite grids.
func FuzzAccumDfrDirectInputs(f *testing.F) {
	f.Add(2, 0.0, -1.0, 1.0, -1.0, 1.0, 4, 4, 1.0, 64, 0, 0, int64(17), 0, -1, 2)
	f.Add(3, 0.0, 1.0, -1.0, 0.0, 1.0, 0, 4, -1.0, -5, 2, 1, int64(-3), 7, 100, -1)
	f.Add(1, math.NaN(), -1.0, 1.0, -1.0, 1.0, 2, 2, 0.5, 33, 1, 1, int64(1<<31), 31, 1, 1)
	f.Fuzz(func(t *testing.T, axis int, pos, min0, max0, min1, max1 float64, res0, res1 int, lambda float64,
		d, k, x int, seed int64, off, cnt, states int) {
		if res0 > 8 || res1 > 8 || d > 256 || k > 256 || x > 256 || states > 4 || states < -2 {
			return // keep each execution small; validation is what is fuzzed
		}
		g := DfrGrid{Axis: axis, Position: pos, Coord0Min: min0, Coord0Max: max0, Coord1Min: min1, Coord1Max: max1, Res0: res0, Res1: res1}
		n := max(states, 0)
		st := &DfrStates{
			EdgeIndex: make([]int32, n), EdgePos: make([]float32, 3*n), EdgeDir: make([]float32, 3*n),
			EdgeTMin: make([]float32, n), EdgeTMax: make([]float32, n), N0: make([]float32, 3*n), N1: make([]float32, 3*n),
			Prim0: make([]int32, n), Prim1: make([]int32, n), ExteriorAngle: make([]float32, n),
			Src: make([]float32, 3*n), SrcPower: make([]float32, n), Count: states,
		}
		for i := 0; i < n; i++ {
			st.EdgeDir[3*i] = 1
			st.EdgeTMin[i], st.EdgeTMax[i] = -1, 1
			st.N0[3*i+2], st.N1[3*i+2] = 1, -1
			st.Prim0[i], st.Prim1[i] = -1, -1
			st.ExteriorAngle[i] = math.Pi
			st.Src[3*i+1], st.Src[3*i+2] = -1, 0.25
			st.SrcPower[i] = 1
		}
		opt := AccumOptions{Wavelength: lambda, DirectSamples: d, KellerSamples: k, SuffixSamples: x, Seed: seed, LaneOffset: off, LaneCount: cnt}
		res, err := AccumDfrDirect(nil, st, g, nil, nil, opt)
		if err != nil {
			if !errors.Is(err, geom.ErrInvalidArgument) && !errors.Is(err, geom.ErrLength) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for _, v := range res.Power {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 {
				t.Fatalf("power %v", v)
			}
		}
	})
}
