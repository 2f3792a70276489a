package accel

import (
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUSegmentBlockersAgainstReference: on child-pair and quad layouts the
// blockers kernel equals ref.SegmentBlockers on random segments through a
// soup, with ignore rows holding each segment's own first blocker (so the
// second blocker must be found), inactive rows and −1 pads.
func TestGPUSegmentBlockersAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 10))
		tb := tables(t, cloudMesh(4000, 0.06, 41), gridMesh(20, 3))
		rs, err := ref.NewScene(tb)
		if err != nil {
			t.Fatal(err)
		}
		n := 4000
		start, end := make([]float32, 3*n), make([]float32, 3*n)
		for i := range start {
			start[i], end[i] = float32(r.Float64()*2.4-1.2), float32(r.Float64()*2.4-1.2)
		}
		act := make([]bool, n)
		for i := range act {
			act[i] = i%7 != 0
		}
		first, err := rs.SegmentBlockers(start, end, nil, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		const k = 3
		ignore := make([]int32, n*k)
		for i := range n {
			ignore[i*k], ignore[i*k+1], ignore[i*k+2] = -1, first[i], int32(r.IntN(tb.NumFaces()))
		}
		for _, w := range []int{2, 4, 8} {
			b, err := BuildWith(s, tb, Options{Width: w})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			for _, withIgnore := range []bool{false, true} {
				var ign []int32
				var dIgn *launch.Buffer[int32]
				if withIgnore {
					ign, dIgn = ignore, devBuf(t, s, ignore)
				}
				want, err := rs.SegmentBlockers(start, end, act, ign, k)
				if err != nil {
					t.Fatal(err)
				}
				out := poisoned[int32](t, s, n, poisonI32)
				seg := Segments{Start: devBuf(t, s, start), End: devBuf(t, s, end), Active: devBuf(t, s, boolBytes(act)), N: n}
				if err := b.SegmentBlockers(s, seg, dIgn, k, out); err != nil {
					t.Fatal(err)
				}
				got := download(t, s, out, n)
				if i := sameInts(got, want); i >= 0 {
					t.Fatalf("width %d ignore %v: row %d blocker %d, want %d", w, withIgnore, i, got[i], want[i])
				}
				blocked := 0
				for _, v := range want {
					if v >= 0 {
						blocked++
					}
				}
				if blocked < n/10 {
					t.Fatalf("only %d of %d segments blocked", blocked, n)
				}
			}
		}
	})
}
