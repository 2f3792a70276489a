package accel

import (
	"testing"

	"github.com/rayd-go/rayd/launch"
)

// shapeRunner records the launch shape of every entry it is given.
type shapeRunner struct{ grids map[string]launch.Dim3 }

func (r *shapeRunner) launch(_, entry string, grid, block launch.Dim3, _ ...any) error {
	if block.X != EdgeThreads {
		return nil
	}
	r.grids[entry] = grid
	return nil
}

func (r *shapeRunner) memset32(*launch.Buffer[uint32], uint32) error { return nil }
func (r *shapeRunner) zero(zeroer) error                             { return nil }

// TestEdgeRayGrid: the BVH ray kernel gets one block per 128·8 rows (its
// lanes take 8 rows each on average from their warp's share); the brute
// force keeps one thread per row.
func TestEdgeRayGrid(t *testing.T) {
	b := &EdgeBVH{numEdges: 7, bvh: &BVH{numTris: 7, nodes: buf[uint32](), tris: buf[uint32]()}}
	for _, tc := range []struct{ n, bvh, brute uint32 }{{1, 1, 1}, {1024, 1, 8}, {1025, 2, 9}, {4194304, 4096, 32768}} {
		rec := &shapeRunner{grids: map[string]launch.Dim3{}}
		r := Rays{O: buf[float32](), D: buf[float32](), N: int(tc.n)}
		o := EdgeRayOut{buf[float32](), buf[float32](), buf[float32](), buf[float32](), buf[float32](),
			buf[int32](), buf[int32](), buf[int32]()}
		for _, entry := range []string{"rayd_edge_nearest_ray", "rayd_edge_brute_ray"} {
			if err := b.rayQuery(rec, entry, r, o); err != nil {
				t.Fatal(err)
			}
		}
		if g := rec.grids["rayd_edge_nearest_ray"]; g.X != tc.bvh || g.Y != 1 {
			t.Errorf("n=%d: BVH grid %v, want %d blocks", tc.n, g, tc.bvh)
		}
		if g := rec.grids["rayd_edge_brute_ray"]; g.X != tc.brute {
			t.Errorf("n=%d: brute grid %v, want %d blocks", tc.n, g, tc.brute)
		}
	}
}
