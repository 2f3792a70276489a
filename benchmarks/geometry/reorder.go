package main

import "math"

// The ray reordering probe's host side: a sort key per ray, the stable
// order of the keys, and the rays gathered into that order.

// mortonBits is the Morton code's share of a 32-bit ray key: the 30-bit
// code of 10-bit cells per axis without its lowest (z) bit, below the
// 3-bit direction octant.
const mortonBits = 29

// keyNote describes rayKey in the JSON.
const keyNote = "uint32 per ray: direction octant in bits 31..29 (x<0, y<0, z<0), then the 30-bit Morton code (x high) of the origin quantized to 1024 cells per axis of the origins' bounding box, shifted right by one (29 bits); computed on the host"

// octant is the direction's octant: bit 2 x < 0, bit 1 y < 0, bit 0 z < 0
// (−0 and NaN count as non-negative).
func octant(dx, dy, dz float32) uint32 {
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

// cell quantizes v into 1024 cells of [lo, hi] (clamped; 0 for an empty
// extent or NaN).
func cell(v, lo, hi float32) uint32 {
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

// rayKey is the sort key of a ray with origin o and direction d in the box
// [lo, hi] of the origins (keyNote).
func rayKey(o, d, lo, hi [3]float32) uint32 {
	m := morton30(cell(o[0], lo[0], hi[0]), cell(o[1], lo[1], hi[1]), cell(o[2], lo[2], hi[2]))
	return octant(d[0], d[1], d[2])<<mortonBits | m>>1
}

// rayKeys is rayKey of every ray of o and dir (3 floats a ray) in the
// bounding box of the origins.
func rayKeys(o, dir []float32) []uint32 {
	lo := [3]float32{float32(math.Inf(1)), float32(math.Inf(1)), float32(math.Inf(1))}
	hi := [3]float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))}
	for i := 0; i+2 < len(o); i += 3 {
		for k := range 3 {
			lo[k], hi[k] = min(lo[k], o[i+k]), max(hi[k], o[i+k])
		}
	}
	keys := make([]uint32, len(o)/3)
	for i := range keys {
		keys[i] = rayKey([3]float32(o[3*i:3*i+3]), [3]float32(dir[3*i:3*i+3]), lo, hi)
	}
	return keys
}

// stableOrder is the ray order of keys sorted ascending, equal keys in
// input order: order[j] is the input row at position j (a least
// significant digit radix sort, the host image of the device sort).
func stableOrder(keys []uint32) []int32 {
	n := len(keys)
	order, tmp := make([]int32, n), make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	for shift := 0; shift < 32; shift += 8 {
		var count [257]int
		for _, i := range order {
			count[(keys[i]>>shift)&255+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for _, i := range order {
			d := (keys[i] >> shift) & 255
			tmp[count[d]] = i
			count[d]++
		}
		order, tmp = tmp, order
	}
	return order
}

// gather3 is src (3 floats a row) with its rows in order: row j of the
// result is row order[j] of src.
func gather3(src []float32, order []int32) []float32 {
	out := make([]float32, 3*len(order))
	for j, i := range order {
		copy(out[3*j:3*j+3], src[3*i:3*i+3])
	}
	return out
}
