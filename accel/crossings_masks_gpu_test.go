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
// on child-pair and quad layouts, under FetchBatch and FetchDynamic (one row
// a thread, and a persistent launch of 3 blocks), written into poisoned
// outputs; after the masks are reset to the default the unmasked kernels
// give the unmasked reference again.
func TestGPUCrossingsMaskedAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 12))
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
		type build struct {
			w int
			f Fetch
			b *BVH
		}
		var builds []build
		for _, w := range []int{2, 4} {
			for _, f := range []Fetch{FetchBatch, FetchDynamic} {
				builds = append(builds, build{w, f, dynamicBVH(t, s, tb, w, f)})
			}
		}
		for _, masks := range [][]uint8{{0x01, 0x00, 0x06}, {0x00, 0x80, 0x00}, {0xFF, 0xFF, 0xFF}} {
			for m, v := range masks {
				if err := tb.SetMask(m, v); err != nil {
					t.Fatal(err)
				}
			}
			rs.ReloadMasks()
			for _, c := range builds {
				if err := c.b.SetFaceMasks(s, tb.FaceMasks()); err != nil {
					t.Fatal(err)
				}
				if c.b.Masked() == tb.MasksDefault() {
					t.Fatalf("masks %v: Masked() = %v", masks, c.b.Masked())
				}
			}
			for _, k := range []int{1, 9, 33, geom.MaxCrossingsK} {
				want, err := rs.Crossings(start, end, act, k)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range builds {
					for _, persistent := range []bool{false, true} {
						sg := seg
						if persistent {
							sg.Counter, sg.PersistentBlocks = devOut[uint32](t, s, 1), 3
						}
						got := deviceCrossings(t, s, n, k, func(out Crossings) error { return c.b.Crossings(s, sg, k, out) })
						if i := testscene.CrossingsDiff(got, want); i >= 0 {
							t.Fatalf("width %d fetch %v masks %v k %d persistent %v: row %d differs: count %d / %d, prim %v / %v",
								c.w, c.f, masks, k, persistent, i, got.Count[i], want.Count[i], got.Prim[i*k:i*k+k],
								want.Prim[i*k:i*k+k])
						}
					}
				}
			}
		}
	})
}
