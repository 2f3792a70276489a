package accel

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/launch"
)

// The instanced intersect's argument list matches its kernels in
// instance.cu, for both BLAS widths, with every optional buffer set and
// unset.
func TestInstanceLaunchArgumentsMatchKernels(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleInstance: parseKernels(t, "instance.cu"),
	}}
	for _, width := range []int{2, 4} {
		l := &InstanceLayer{width: width, geoPtrs: buf[uint64](), geoInfo: buf[int32](), inst: buf[float32](),
			tlas: buf[uint32](), order: buf[int32](), numInst: 3, scale: 1}
		for _, full := range []bool{false, true} {
			r := Rays{O: buf[float32](), D: buf[float32](), N: 10}
			hits := Hits{T: buf[float32]()}
			var inst *launch.Buffer[int32]
			if full {
				r.TMax, r.Active = buf[float32](), buf[uint8]()
				hits = Hits{T: buf[float32](), P: buf[float32](), N: buf[float32](), GeoN: buf[float32](),
					UV: buf[float32](), Bary: buf[float32](), ShapeID: buf[int32](), PrimID: buf[int32](),
					LocalPrimID: buf[int32](), GlobalPrimID: buf[int32]()}
				inst = buf[int32]()
			}
			require.NoError(t, l.launchIntersect(rec, r, 7, hits, inst))
		}
	}
	for entry := range rec.kernels[ModuleInstance] {
		require.Positive(t, rec.seen[ModuleInstance+"."+entry], "kernel %s is never launched", entry)
	}
}
