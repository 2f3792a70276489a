package accel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// The instanced intersect's argument list matches its kernels in
// instance.cu, for both BLAS widths, with every optional buffer set and
// unset, unmasked and masked (per-ray limits, a mesh mask table).
func TestInstanceLaunchArgumentsMatchKernels(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleInstance: parseKernels(t, "instance.cu"),
	}}
	for _, width := range []int{2, 4} {
		l := &InstanceLayer{width: width, geoPtrs: buf[uint64](), geoInfo: buf[int32](), inst: buf[float32](),
			tlas: buf[uint32](), order: buf[int32](), numInst: 3, scale: 1}
		for _, mode := range []string{"plain", "limits", "mesh masks"} {
			r := Rays{O: buf[float32](), D: buf[float32](), N: 10}
			l.meshMask = nil
			switch mode {
			case "limits":
				r.TMin, r.Mask = buf[float32](), buf[uint8]()
			case "mesh masks":
				l.meshMask = buf[uint8]()
			}
			require.Equal(t, mode != "plain", l.maskedFor(r))
			require.NoError(t, l.launchIntersect(rec, r, 7, Hits{T: buf[float32]()}, nil))
		}
		for _, full := range []bool{false, true} {
			l.meshMask = nil
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

// The instance mask travels in record word 22 as its uint32 bits, the
// padding word stays zero.
func TestInstanceRecordsCarryMask(t *testing.T) {
	tb, err := geom.BuildTables([]geom.Mesh{testscene.Grid(1, 1, 0)})
	require.NoError(t, err)
	x, err := geom.BuildInstances(tb, []geom.Instance{{Geometry: 0, Transform: geom.Identity},
		{Geometry: 0, Transform: geom.Identity, Mask: geom.Mask(0x05)}})
	require.NoError(t, err)
	require.NoError(t, x.SetMask(0, 0))
	w := InstanceRecords(x)
	require.Equal(t, []uint32{0, 0x05}, []uint32{math.Float32bits(w[22]), math.Float32bits(w[InstanceRecordWords+22])})
	require.Zero(t, math.Float32bits(w[23]))
	require.Zero(t, math.Float32bits(w[InstanceRecordWords+23]))
}
