package main

import "github.com/rayd-go/rayd/accel"

// The ray reordering probe's host side: a sort key per ray, the stable
// order of the keys, and the rays gathered into that order.

// keyNote describes the key (accel.ReorderKeys) in the JSON.
const keyNote = "uint32 per ray: direction octant in bits 31..29 (x<0, y<0, z<0), then the 30-bit Morton code (x high) of the origin quantized to 1024 cells per axis of the origins' bounding box, shifted right by one (29 bits); accel.ReorderKeys on the host, rayd_reorder_bounds and rayd_reorder_keys on the device"

// rayKeys is the sort key of every ray of o and dir (3 floats a ray):
// accel.ReorderKeys, the host image of the Reorderer's device keys.
func rayKeys(o, dir []float32) []uint32 { return accel.ReorderKeys(o, dir) }

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
