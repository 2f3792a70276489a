package testscene

import (
	"math"
	"math/rand/v2"
)

// maskChoices are the visibility masks the generators draw from: disjoint
// single bits, overlaps, the default and the empty mask.
var maskChoices = []uint8{0x01, 0x02, 0x03, 0x04, 0x05, 0xFF, 0x00}

// RandomLimits draws valid per-ray limits for rows with the given tmax
// (empty: unbounded): tmin is 0, the contract's epsilon, a fraction of a
// small tmax or a point along an unbounded (or huge-tmax) ray (so that near hits are cut
// off), and every row's mask is one of a few overlapping bit patterns. A
// finite tmax must be ≥ 0.
func RandomLimits(r *rand.Rand, n int, tmax []float32) (tmin []float32, mask []uint8) {
	tmin = make([]float32, n)
	mask = make([]uint8, n)
	for i := range n {
		tm := float32(math.Inf(1))
		if len(tmax) > 0 {
			tm = tmax[i]
		}
		switch r.IntN(4) {
		case 0:
			tmin[i] = 0
		case 1:
			tmin[i] = 1e-6
		default:
			if tm <= 16 { // a bounded row (NaN falls through)
				tmin[i] = tm * float32(r.Float64())
			} else {
				tmin[i] = float32(r.Float64() * 1.5)
			}
		}
		if len(tmax) > 0 && tmin[i] > tmax[i] {
			tmin[i] = tmax[i]
		}
		mask[i] = maskChoices[r.IntN(len(maskChoices))]
	}
	return tmin, mask
}

// RandomMeshMasks draws a visibility mask per mesh, at least one of them
// not the default.
func RandomMeshMasks(r *rand.Rand, meshes int) []uint8 {
	out := make([]uint8, meshes)
	for m := range out {
		out[m] = maskChoices[r.IntN(len(maskChoices))]
	}
	if out[0] == 0xFF {
		out[0] = 0x01
	}
	return out
}

// RandomInstanceMasks draws a visibility mask per instance from the same
// patterns, at least one of them not the default.
func RandomInstanceMasks(r *rand.Rand, instances int) []uint8 {
	return RandomMeshMasks(r, instances)
}
