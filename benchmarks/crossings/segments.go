package main

import "math"

// boxHalf is the half-extent of the box the chords span: the compute
// cloud's triangle centres fill [−1, 1]³.
const boxHalf = 1

// chords returns, for every ray o + s·d (o inside the box), the segment
// where its line crosses the box [−boxHalf, boxHalf]³: from the entry to
// the exit point, computed in float64 and rounded once per coordinate.
func chords(o, d []float32) (start, end []float32) {
	start, end = make([]float32, len(o)), make([]float32, len(o))
	for i := 0; i < len(o)/3; i++ {
		lo, hi := math.Inf(-1), math.Inf(1)
		for k := range 3 {
			ok, dk := float64(o[3*i+k]), float64(d[3*i+k])
			if dk == 0 {
				continue
			}
			a, b := (-boxHalf-ok)/dk, (boxHalf-ok)/dk
			lo, hi = math.Max(lo, math.Min(a, b)), math.Min(hi, math.Max(a, b))
		}
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			lo, hi = 0, 0
		}
		for k := range 3 {
			ok, dk := float64(o[3*i+k]), float64(d[3*i+k])
			start[3*i+k] = float32(ok + lo*dk)
			end[3*i+k] = float32(ok + hi*dk)
		}
	}
	return start, end
}
