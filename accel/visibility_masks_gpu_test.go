package accel

import (
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUSegmentBlockersMaskedAgainstReference: with face masks set (a
// hidden mesh, then other masks, then the default again) the masked
// blockers kernels equal ref.SegmentBlockers under the same masks on 65,536
// random segments, with and without ignore rows, on child-pair and quad
// layouts, written into poisoned outputs; no blocker is a face of mask 0.
func TestGPUSegmentBlockersMaskedAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 14))
		tb := tables(t, cloudMesh(4000, 0.06, 47), gridMesh(20, 3), cloudMesh(500, 0.2, 48))
		rs, err := ref.NewScene(tb)
		if err != nil {
			t.Fatal(err)
		}
		const n, k = 1 << 16, 3
		start, end := make([]float32, 3*n), make([]float32, 3*n)
		for i := range start {
			start[i], end[i] = float32(r.Float64()*2.4-1.2), float32(r.Float64()*2.4-1.2)
		}
		act := make([]bool, n)
		for i := range act {
			act[i] = i%7 != 0
		}
		seg := Segments{Start: devBuf(t, s, start), End: devBuf(t, s, end), Active: devBuf(t, s, boolBytes(act)), N: n}
		for _, w := range []int{2, 4} {
			b, err := BuildWith(s, tb, Options{Width: w})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			for _, masks := range [][]uint8{{0x01, 0x00, 0x04}, {0x00, 0x02, 0x00}, {0xFF, 0xFF, 0xFF}} {
				for m, v := range masks {
					if err := tb.SetMask(m, v); err != nil {
						t.Fatal(err)
					}
				}
				rs.ReloadMasks()
				if err := b.SetFaceMasks(s, tb.FaceMasks()); err != nil {
					t.Fatal(err)
				}
				first, err := rs.SegmentBlockers(start, end, nil, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				ignore := make([]int32, n*k)
				for i := range n {
					ignore[i*k], ignore[i*k+1], ignore[i*k+2] = -1, first[i], int32(r.IntN(tb.NumFaces()))
				}
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
					if err := b.SegmentBlockers(s, seg, dIgn, k, out); err != nil {
						t.Fatal(err)
					}
					got := download(t, s, out, n)
					if i := sameInts(got, want); i >= 0 {
						t.Fatalf("width %d masks %v ignore %v: row %d blocker %d, want %d", w, masks, withIgnore, i, got[i], want[i])
					}
					for i, p := range got {
						if p >= 0 && masks[tb.FaceShape[p]] == 0 {
							t.Fatalf("masks %v: row %d blocked by face %d of a hidden mesh", masks, i, p)
						}
					}
				}
			}
		}
	})
}
