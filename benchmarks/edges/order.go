package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rayd-go/rayd/accel"
)

// Row orders for -orders: each ray batch (and, for xyz, each point batch)
// is also timed with its rows sorted on the host by one of these 32-bit
// keys (a probe of how much coherent warps would gain; the queries
// themselves never reorder). Each key quantizes the origin (the point) in
// the origins' bounding box and the direction by its octahedral map
// (u, v ∈ [−1, 1]).
var rowOrders = map[string]func(o, d, tmax []float32) []uint32{
	// xyz: the origin's (the point's) 30-bit Morton code, 10 bits per axis;
	// the direction is ignored, so it orders point batches too.
	"xyz": func(o, _, _ []float32) []uint32 { return mortonKeys(o, nil, 10, 0, "xyz") },
	// octant: accel.ReorderKeys, the intersect's reordering key (direction
	// octant, then the origin's 30-bit Morton code).
	"octant": func(o, d, _ []float32) []uint32 { return accel.ReorderKeys(o, d) },
	// m5: a 5-D Morton code, 6 bits of each origin axis and of u and v.
	"m5": func(o, d, _ []float32) []uint32 { return mortonKeys(o, d, 6, 6, "m5") },
	// dir: 5 bits of u and v interleaved, then 7 bits per origin axis.
	"dir": func(o, d, _ []float32) []uint32 { return mortonKeys(o, d, 7, 5, "dir") },
	// org: 6 bits per origin axis, then 6 bits of u and v.
	"org": func(o, d, _ []float32) []uint32 { return mortonKeys(o, d, 6, 6, "org") },
	// mid, mid5, ends: keys of the part of each query inside the origins'
	// bounding box (clippedKeys).
	"mid":  func(o, d, tmax []float32) []uint32 { return clippedKeys(o, d, tmax, "mid") },
	"mid5": func(o, d, tmax []float32) []uint32 { return clippedKeys(o, d, tmax, "mid5") },
	"ends": func(o, d, tmax []float32) []uint32 { return clippedKeys(o, d, tmax, "ends") },
}

// clippedKeys keys each query by its part inside the origins' bounding box
// (segments: [0, T]; tmax nil, half rays: [0, +Inf) clipped), its points
// quantized in that box: mid, the 30-bit Morton code of its midpoint; mid5,
// 6 bits per axis of the midpoint and of u, v; ends, a 6-D Morton code of
// its entry and exit points, 5 bits per axis each.
func clippedKeys(o, d, tmax []float32, mode string) []uint32 {
	lo, hi := bounds(o)
	n := len(o) / 3
	mid := make([]float32, 3*n)
	in := make([]float32, 3*n)
	out := make([]float32, 3*n)
	for i := range n {
		t0, t1 := 0.0, math.Inf(1)
		if tmax != nil {
			t1 = float64(tmax[i])
		}
		for k := range 3 {
			ok, dk := float64(o[3*i+k]), float64(d[3*i+k])
			if dk == 0 {
				continue
			}
			a, b := (lo[k]-ok)/dk, (hi[k]-ok)/dk
			t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
		}
		if !(t1 >= t0) || math.IsInf(t1, 1) {
			t1 = t0
		}
		for k := range 3 {
			ok, dk := float64(o[3*i+k]), float64(d[3*i+k])
			in[3*i+k], out[3*i+k] = float32(ok+t0*dk), float32(ok+t1*dk)
			mid[3*i+k] = float32(ok + 0.5*(t0+t1)*dk)
		}
	}
	switch mode {
	case "mid":
		return mortonKeysIn(mid, nil, lo, hi, 10, 0, "xyz")
	case "mid5":
		return mortonKeysIn(mid, d, lo, hi, 6, 6, "m5")
	}
	a, b := mortonKeysIn(in, nil, lo, hi, 10, 0, "xyz"), mortonKeysIn(out, nil, lo, hi, 10, 0, "xyz")
	keys := make([]uint32, n)
	for i := range keys {
		var c [6]uint32
		for k := range 3 {
			c[k] = deinterleave(a[i], k, 10) >> 5
			c[3+k] = deinterleave(b[i], k, 10) >> 5
		}
		keys[i] = interleave(c[:], 5)
	}
	return keys
}

// deinterleave is axis k's bits bits of a 3-D Morton code (axis 0 highest).
func deinterleave(key uint32, k, bits int) uint32 {
	var c uint32
	for b := bits - 1; b >= 0; b-- {
		c = c<<1 | (key>>(3*b+2-k))&1
	}
	return c
}

// withOrders returns bs followed, for each ray batch and each order named in
// orders (comma-separated; empty: none), by a copy of the batch with its
// rows sorted by that order's key (stable), named base@order.
func withOrders(bs []*batch, orders string) ([]*batch, error) {
	if orders == "" {
		return bs, nil
	}
	out := slices.Clone(bs)
	for _, name := range strings.Split(orders, ",") {
		key, ok := rowOrders[name]
		if !ok {
			return nil, fmt.Errorf("unknown row order %q in -orders (octant, m5, dir, org, mid, mid5, ends, xyz)", name)
		}
		for _, b := range bs {
			if b.d == nil && name != "xyz" {
				continue
			}
			keys := key(b.p, b.d, b.tmax)
			idx := make([]int32, len(keys))
			for i := range idx {
				idx[i] = int32(i)
			}
			slices.SortStableFunc(idx, func(x, y int32) int { return cmp.Compare(keys[x], keys[y]) })
			v := &batch{name: b.name + "@" + name, base: b.base, rows: b.name + "@" + name, p: gatherRows(b.p, idx, 3)}
			if b.d != nil {
				v.d = gatherRows(b.d, idx, 3)
			}
			if b.tmax != nil {
				v.tmax = gatherRows(b.tmax, idx, 1)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// gatherRows is src (w floats a row) with row j taken from row idx[j].
func gatherRows(src []float32, idx []int32, w int) []float32 {
	out := make([]float32, w*len(idx))
	for j, i := range idx {
		copy(out[w*j:w*j+w], src[w*int(i):w*int(i)+w])
	}
	return out
}

// mortonKeys quantizes each origin axis to ob bits and u, v to db bits and
// combines them: mode m5 interleaves all five (db = ob), dir puts u, v's
// Morton code above the origin's, org the origin's above u, v's, xyz keeps
// the origin's alone (d may then be nil).
func mortonKeys(o, d []float32, ob, db int, mode string) []uint32 {
	lo, hi := bounds(o)
	return mortonKeysIn(o, d, lo, hi, ob, db, mode)
}

// bounds is the bounding box of the points o (x, y, z a row).
func bounds(o []float32) (lo, hi [3]float64) {
	lo = [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi = [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for i, v := range o {
		lo[i%3], hi[i%3] = min(lo[i%3], float64(v)), max(hi[i%3], float64(v))
	}
	return lo, hi
}

// mortonKeysIn is mortonKeys with the origins quantized in the box [lo, hi].
func mortonKeysIn(o, d []float32, lo, hi [3]float64, ob, db int, mode string) []uint32 {
	cell := func(v, lo, hi float64, bits int) uint32 {
		n := float64(uint32(1) << bits)
		if !(hi > lo) {
			return 0
		}
		t := (v - lo) / (hi - lo) * n
		if !(t > 0) {
			return 0
		}
		return uint32(min(t, n-1))
	}
	keys := make([]uint32, len(o)/3)
	for i := range keys {
		var c [5]uint32
		for k := range 3 {
			c[k] = cell(float64(o[3*i+k]), lo[k], hi[k], ob)
		}
		if mode == "xyz" {
			keys[i] = interleave(c[:3], ob)
			continue
		}
		x, y, z := float64(d[3*i]), float64(d[3*i+1]), float64(d[3*i+2])
		s := math.Abs(x) + math.Abs(y) + math.Abs(z)
		u, w := x/s, y/s
		if z < 0 {
			u, w = math.Copysign(1-math.Abs(y/s), x), math.Copysign(1-math.Abs(x/s), y)
		}
		c[3], c[4] = cell(u, -1, 1, db), cell(w, -1, 1, db)
		var key uint32
		switch {
		case mode == "dir":
			key = interleave(c[3:], db)<<(3*ob) | interleave(c[:3], ob)
		case mode == "m5":
			key = interleave(c[:], ob)
		default:
			key = interleave(c[:3], ob)<<(2*db) | interleave(c[3:], db)
		}
		keys[i] = key
	}
	return keys
}

// interleave is the Morton code of cs, bits bits each, cs[0] highest.
func interleave(cs []uint32, bits int) uint32 {
	var key uint32
	for b := bits - 1; b >= 0; b-- {
		for _, c := range cs {
			key = key<<1 | (c>>b)&1
		}
	}
	return key
}
