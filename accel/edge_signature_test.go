package accel

import (
	"testing"

	"github.com/rayd-go/rayd/launch"
)

// edgeLaunches drives every edge kernel launch through the recorder, with
// and without edges, every optional buffer set and unset.
func edgeLaunches(t *testing.T, rec *recorder) {
	t.Helper()
	withTree := &EdgeBVH{numEdges: 7, v0: buf[int32](), v1: buf[int32](), boundary: buf[uint8](),
		bvh: &BVH{numTris: 7, nodes: buf[uint32](), tris: buf[uint32](), geo: Geometry{Vertices: buf[float32]()}}}
	empty := &EdgeBVH{}
	for _, b := range []*EdgeBVH{withTree, empty} {
		for _, full := range []bool{false, true} {
			q := EdgePoints{P: buf[float32](), N: 10}
			r := Rays{O: buf[float32](), D: buf[float32](), N: 10}
			pg, rg := EdgePointGrad{}, EdgeRayGrad{}
			b.mask = nil
			if full {
				q.Active, r.TMax, r.Active, b.mask = buf[uint8](), buf[float32](), buf[uint8](), buf[uint8]()
				pg = EdgePointGrad{Distance: buf[float64](), EdgePoint: buf[float64](), EdgeT: buf[float64]()}
				rg = EdgeRayGrad{Distance: buf[float64](), RayT: buf[float64](), Point: buf[float64](),
					EdgeT: buf[float64](), EdgePoint: buf[float64]()}
			}
			po := EdgePointOut{buf[float32](), buf[float32](), buf[float32](), buf[int32](), buf[int32](), buf[int32]()}
			ro := EdgeRayOut{buf[float32](), buf[float32](), buf[float32](), buf[float32](), buf[float32](),
				buf[int32](), buf[int32](), buf[int32]()}
			ko := EdgeTopKOut{buf[uint8](), buf[uint8](), buf[float32](), buf[float32](), buf[float32](), buf[float32](),
				buf[int32](), buf[int32](), buf[int32]()}
			f64 := func() *launch.Buffer[float64] { return buf[float64]() }
			for _, k := range EdgeRayKernels[1:] { // every ray kernel but auto
				if err := b.rayQuery(rec, k.entry(), r, ro); err != nil {
					t.Fatal(err)
				}
			}
			for _, err := range []error{
				b.pointQuery(rec, "rayd_edge_nearest_point", q, po),
				b.pointQuery(rec, "rayd_edge_brute_point", q, po),
				b.rayQuery(rec, "rayd_edge_brute_ray", r, ro),
				b.nearestK(rec, q, 5, ko),
				b.pointVJP(rec, buf[float32](), buf[int32](), 10, pg, f64(), f64()),
				b.rayVJP(rec, r, buf[int32](), rg, f64(), f64(), f64()),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
