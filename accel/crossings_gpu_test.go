package accel

import (
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUCrossingsAgainstReference: on child-pair and quad layouts, for k
// on both sides of every kernel's slot count, under FetchBatch and
// FetchDynamic (one row a thread, and persistent launches of the default
// grid and of 3 blocks, where every lane of the dynamic kernels takes many
// rows), the crossings kernels equal ref.Crossings bit for bit on 65,536
// random segments (inactive, degenerate and non-finite rows among them)
// through a cloud, a grid and a sphere, written into poisoned outputs; many
// rows overflow small k.
func TestGPUCrossingsAgainstReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 11))
		tb := tables(t, cloudMesh(6000, 0.08, 43), gridMesh(24, 3), testscene.Sphere([3]float32{.2, 0, 0}, .7, 24, 12))
		rs, err := ref.NewScene(tb)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1 << 16
		start, end := testscene.RandomSegments(r, tb, n)
		act := make([]bool, n)
		for i := range act {
			act[i] = i%11 != 0
		}
		seg := Segments{Start: devBuf(t, s, start), End: devBuf(t, s, end), Active: devBuf(t, s, boolBytes(act)), N: n}
		ks := []int{1, 8, 9, 33, geom.MaxCrossingsK}
		wants := make([]*geom.Crossings, len(ks))
		for j, k := range ks {
			if wants[j], err = rs.Crossings(start, end, act, k); err != nil {
				t.Fatal(err)
			}
			over := 0
			for _, o := range wants[j].Overflow {
				if o {
					over++
				}
			}
			if k == 1 && over < n/20 {
				t.Fatalf("only %d of %d rows overflow k = 1", over, n)
			}
		}
		for _, w := range []int{2, 4} {
			for _, f := range []Fetch{FetchBatch, FetchDynamic} {
				b := dynamicBVH(t, s, tb, w, f)
				for j, k := range ks {
					for _, blocks := range []int{-1, 0, 3} { // -1: one row a thread
						sg := seg
						if blocks >= 0 {
							sg.Counter, sg.PersistentBlocks = devOut[uint32](t, s, 1), blocks
						}
						got := deviceCrossings(t, s, n, k, func(out Crossings) error { return b.Crossings(s, sg, k, out) })
						want := wants[j]
						if i := testscene.CrossingsDiff(got, want); i >= 0 {
							t.Fatalf("width %d fetch %v k %d blocks %d: row %d differs: count %d / %d, t %v / %v, prim %v / %v",
								w, f, k, blocks, i, got.Count[i], want.Count[i], got.T[i*k:i*k+k], want.T[i*k:i*k+k],
								got.Prim[i*k:i*k+k], want.Prim[i*k:i*k+k])
						}
					}
				}
			}
		}
	})
}

// deviceCrossings runs a crossings launch into poisoned buffers and
// downloads the record (Overflow derived from Count as the engine does).
func deviceCrossings(t *testing.T, s *launch.Stream, n, k int, run func(Crossings) error) *geom.Crossings {
	t.Helper()
	out := Crossings{T: poisoned[float32](t, s, n*k, poisonF32), Prim: poisoned[int32](t, s, n*k, poisonI32),
		Shape: poisoned[int32](t, s, n*k, poisonI32), Count: poisoned[int32](t, s, n, poisonI32)}
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	c := &geom.Crossings{K: k, T: download(t, s, out.T, n*k), Prim: download(t, s, out.Prim, n*k),
		Shape: download(t, s, out.Shape, n*k), Count: download(t, s, out.Count, n), Overflow: make([]bool, n)}
	c.SetOverflow()
	return c
}
