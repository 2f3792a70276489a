package geom

import (
	"errors"
	"testing"
)

// FuzzVisibilityVariants: arbitrary inputs to VisiblePair, VisibleEdge and
// VisibleChain end in a typed error or in results of the right shape whose
// segments the blockers saw with matching lengths, never a panic.
func FuzzVisibilityVariants(f *testing.F) {
	f.Add(bytesOf([]float32{0, 0, 1, 0, 0, -1, 0, 0, 2}), bytesOfInts([]int32{7, -1}), uint8(2), uint8(3))
	f.Add(bytesOf([]float32{0, 0, 1, 1, 1, 1}), bytesOfInts([]int32{1}), uint8(0), uint8(2))
	f.Add([]byte{}, []byte{}, uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, fb, ib []byte, p, nfr uint8) {
		v, ids := floatsFrom(fb), intsFrom(ib)
		var q planeBlockers
		check := func(start, end []float32, active []bool, ignore []int32, k int) ([]int32, error) {
			n := len(start) / 3
			if len(start) != 3*n || len(end) != 3*n || len(active) != n || (len(ignore) != 0 && len(ignore) != n*k) {
				t.Fatalf("blockers got %d/%d/%d/%d values for %d segments (k %d)", len(start), len(end), len(active), len(ignore), n, k)
			}
			return q.query(start, end, active, ignore, k)
		}
		typed := func(err error) {
			if err != nil && !errors.Is(err, ErrLength) && !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("untyped error: %v", err)
			}
		}
		third := len(v) / 3 / 3 * 3
		a, b, err := VisiblePair(v[:third], v[third:2*third], v[2*third:3*third], ids, nil, check)
		typed(err)
		if err == nil && (len(a) != third/3 || len(b) != third/3) {
			t.Fatalf("pair: %d/%d rows of %d", len(a), len(b), third/3)
		}
		n := len(v) / 11
		e := EdgeSamples{Source: v[:3*n], Position: v[3*n : 6*n], Direction: v[6*n : 9*n], TMin: v[9*n : 10*n],
			TMax: v[10*n : 11*n], Fractions: v[:min(int(nfr), len(v))]}
		if nfr == 0 {
			e.Fractions = nil
		}
		vis, err := VisibleEdge(e, check)
		typed(err)
		if err == nil && len(vis) != n {
			t.Fatalf("edge: %d rows of %d", len(vis), n)
		}
		c, err := VisibleChain(v, int(p), ids[:min(len(ids), max(len(v)/max(3*int(p), 1), 0))], nil, nil, check)
		typed(err)
		if err == nil && len(c.AllVisible) != len(v)/(3*int(p)) {
			t.Fatalf("chain: %d rows", len(c.AllVisible))
		}
	})
}
