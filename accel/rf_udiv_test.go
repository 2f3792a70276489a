package accel

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// udiv mirrors rf_common.cuh's division by an invariant d ≥ 1 for n < 2^31:
// n / d = (n·m) >> sh, sh = 31 + ⌈log2 d⌉, m = ⌈2^sh / d⌉.
type udiv struct {
	d, m uint32
	sh   uint
}

func udivOf(d uint32) udiv {
	v := udiv{d: d, sh: 31}
	if d > 1 {
		v.sh += uint(32 - bits.LeadingZeros32(d-1))
	}
	m := (uint64(1)<<v.sh + uint64(d) - 1) / uint64(d)
	if m > 1<<32-1 {
		panic("multiplier does not fit 32 bits")
	}
	v.m = uint32(m)
	return v
}

func (v udiv) q(n uint32) uint32 { return uint32(uint64(n) * uint64(v.m) >> v.sh) }

// TestUdivEqualsDivision: the RF kernels' lane mapping (lane → state, cell;
// cell → row, column) by multiply and shift equals integer division for
// every divisor class (1, powers of two and their neighbours, small, random,
// the largest) and dividends at 0, around multiples of d and at 2^31 − 1.
func TestUdivEqualsDivision(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ds []uint32
	for d := uint32(1); d <= 4096; d++ {
		ds = append(ds, d)
	}
	for k := 13; k < 31; k++ {
		ds = append(ds, 1<<k-1, 1<<k, 1<<k+1)
	}
	for range 2000 {
		ds = append(ds, 1+r.Uint32N(1<<31-1))
	}
	ds = append(ds, 1<<31-1, 1<<31-2, 65535*65537%(1<<31))
	const top = 1<<31 - 1
	for _, d := range ds {
		v := udivOf(d)
		ns := []uint32{0, 1, d - 1, d, d + 1, top, top - 1, top - d%top}
		for k := range uint32(64) {
			if m := uint64(d) * uint64(r.Uint32N(top/d+1)); m+uint64(k%3) <= top {
				ns = append(ns, uint32(m)+k%3, uint32(max(m, 1))-1)
			}
			ns = append(ns, r.Uint32N(top+1))
		}
		for _, n := range ns {
			if n > top {
				continue
			}
			if got := v.q(n); got != n/d {
				t.Fatalf("%d / %d: got %d (m %d, sh %d)", n, d, got, v.m, v.sh)
			}
		}
	}
}
