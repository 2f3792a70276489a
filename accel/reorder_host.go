package accel

import "math"

// The host image of the Reorderer's sort key (rayd_reorder_bounds and
// rayd_reorder_keys compute it bit for bit on the device).

// reorderMortonBits is the Morton code's share of a 32-bit ray key: the
// 30-bit code of 10-bit cells per axis without its lowest (z) bit, below
// the 3-bit direction octant.
const reorderMortonBits = 29

// rayOctant is the direction's octant: bit 2 x < 0, bit 1 y < 0, bit 0
// z < 0 (−0 and NaN count as non-negative).
func rayOctant(dx, dy, dz float32) uint32 {
	var o uint32
	if dx < 0 {
		o |= 4
	}
	if dy < 0 {
		o |= 2
	}
	if dz < 0 {
		o |= 1
	}
	return o
}

// rayCell quantizes v into 1024 cells of [lo, hi] in float64 (clamped; 0
// for an empty extent or NaN).
func rayCell(v, lo, hi float32) uint32 {
	if !(hi > lo) {
		return 0
	}
	t := (float64(v) - float64(lo)) / (float64(hi) - float64(lo)) * 1024
	if !(t > 0) {
		return 0
	}
	return uint32(min(t, 1023))
}

// spread10 spreads the low 10 bits of v to every third bit.
func spread10(v uint32) uint32 {
	v &= 0x3ff
	v = (v | v<<16) & 0x030000ff
	v = (v | v<<8) & 0x0300f00f
	v = (v | v<<4) & 0x030c30c3
	v = (v | v<<2) & 0x09249249
	return v
}

// morton30 interleaves three 10-bit cells, x in the highest bit.
func morton30(x, y, z uint32) uint32 { return spread10(x)<<2 | spread10(y)<<1 | spread10(z) }

// reorderKey is the sort key of a ray with origin o and direction d in the
// box [lo, hi] of the origins.
func reorderKey(o, d, lo, hi [3]float32) uint32 {
	m := morton30(rayCell(o[0], lo[0], hi[0]), rayCell(o[1], lo[1], hi[1]), rayCell(o[2], lo[2], hi[2]))
	return rayOctant(d[0], d[1], d[2])<<reorderMortonBits | m>>1
}

// ReorderKeys is the Reorderer's sort key of every ray of o and d (3
// floats a ray), computed on the host: the direction's octant in bits
// 31..29 (x < 0, y < 0, z < 0), then the 30-bit Morton code (x high) of
// the origin quantized to 1024 cells per axis of the origins' bounding box,
// shifted right by one. A NaN origin coordinate makes its axis of the box
// NaN, and every cell of that axis 0.
func ReorderKeys(o, d []float32) []uint32 {
	lo := [3]float32{float32(math.Inf(1)), float32(math.Inf(1)), float32(math.Inf(1))}
	hi := [3]float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))}
	for i := 0; i+2 < len(o); i += 3 {
		for k := range 3 {
			lo[k], hi[k] = min(lo[k], o[i+k]), max(hi[k], o[i+k])
		}
	}
	keys := make([]uint32, min(len(o), len(d))/3)
	for i := range keys {
		keys[i] = reorderKey([3]float32(o[3*i:3*i+3]), [3]float32(d[3*i:3*i+3]), lo, hi)
	}
	return keys
}
