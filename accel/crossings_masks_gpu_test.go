package accel

import (
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUCrossingsMaskedAgainstReference: with face masks set (one mesh of
// mask 0, the others nonzero) the masked crossings kernels equal
// ref.Crossings under the same masks bit for bit on 65,536 random segments,
// on child-pair and quad layouts, written into poisoned outputs; after the
// masks are reset to the default the unmasked kernels give the unmasked
// reference again.
func TestGPUCrossingsMaskedAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 12))
		tb := tables(t, cloudMesh(6000, 0.08, 44), gridMesh(24, 3), testscene.Sphere([3]float32{.2, 0, 0}, .7, 24, 12))
		rs, err := ref.NewScene(tb)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1 << 16
		start, end := testscene.RandomSegments(r, tb, n)
		act := make([]bool, n)
		for i := range act {
			act[i] = i%13 != 0
		}
		seg := Segments{Start: devBuf(t, s, start), End: devBuf(t, s, end), Active: devBuf(t, s, boolBytes(act)), N: n}
		for _, w := range []int{2, 4} {
			b, err := BuildWith(s, tb, Options{Width: w})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			for _, masks := range [][]uint8{{0x01, 0x00, 0x06}, {0x00, 0x80, 0x00}, {0xFF, 0xFF, 0xFF}} {
				for m, v := range masks {
					if err := tb.SetMask(m, v); err != nil {
						t.Fatal(err)
					}
				}
				rs.ReloadMasks()
				if err := b.SetFaceMasks(s, tb.FaceMasks()); err != nil {
					t.Fatal(err)
				}
				if b.Masked() == tb.MasksDefault() {
					t.Fatalf("masks %v: Masked() = %v", masks, b.Masked())
				}
				for _, k := range []int{1, 9, 33, geom.MaxCrossingsK} {
					want, err := rs.Crossings(start, end, act, k)
					if err != nil {
						t.Fatal(err)
					}
					got := deviceCrossings(t, s, n, k, func(out Crossings) error { return b.Crossings(s, seg, k, out) })
					if i := testscene.CrossingsDiff(got, want); i >= 0 {
						t.Fatalf("width %d masks %v k %d: row %d differs: count %d / %d, prim %v / %v",
							w, masks, k, i, got.Count[i], want.Count[i], got.Prim[i*k:i*k+k], want.Prim[i*k:i*k+k])
					}
				}
			}
		}
	})
}
