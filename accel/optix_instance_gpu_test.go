package accel

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

// optixInstancedHits runs the OptiX layer's intersect into a record (and
// instance ids) whose every buffer is first poisoned, and downloads it.
func optixInstancedHits(t *testing.T, s *launch.Stream, l *OptiXInstanceLayer, dev Rays, geoMask *launch.Buffer[uint8],
	flags geom.Flags) *geom.Hits {
	t.Helper()
	n := dev.N
	ids := poisoned[int32](t, s, n, poisonI32)
	h := deviceHits(t, s, n, flags, func(out Hits) error {
		poisonHits(t, s, out)
		return l.Intersect(s, dev, flags, geoMask, out, ids)
	})
	if flags.Has(geom.FlagGeometric) {
		h.InstanceID = download(t, s, ids, n)
	}
	return h
}

// checkOptiXInstanced compares the layer's intersect (FlagsAll, then t
// only) for rb with the reference under the instanced tie rule (ip's
// limits, dev carrying the same ones) and returns the comparison's counts.
func checkOptiXInstanced(t *testing.T, s *launch.Stream, l *OptiXInstanceLayer, ip *instParity, dev Rays, rb *rayBatch,
	geoMask *launch.Buffer[uint8]) parityStats {
	t.Helper()
	want, err := ip.reference(rb.o, rb.d, rb.tmax, rb.active)
	require.NoError(t, err)
	got := optixInstancedHits(t, s, l, dev, geoMask, geom.FlagsAll)
	st, err := ip.checkHits(rb.o, rb.d, rb.tmax, rb.active, got, want)
	require.NoError(t, err)
	tOnly := optixInstancedHits(t, s, l, dev, geoMask, geom.FlagsNone)
	for i := range dev.N {
		a, g := float64(got.T[i]), float64(tOnly.T[i])
		require.False(t, !(math.IsInf(a, 1) && math.IsInf(g, 1)) && math.Abs(a-g) > tolT(a),
			"flags None: row %d t %v, flags All %v", i, g, a)
	}
	return st
}

// openOptiXInstanceLayer builds the layer or fails the test (a device with
// a driver must run OptiX).
func openOptiXInstanceLayer(t *testing.T, s *launch.Stream, tb *geom.Tables, x *geom.Instances) *OptiXInstanceLayer {
	t.Helper()
	l, err := NewOptiXInstanceLayer(s, tb, x)
	require.NoError(t, err, "OptiX instance layer")
	t.Cleanup(func() { _ = l.Close() })
	require.Equal(t, x.Len(), l.NumInstances())
	require.Equal(t, tb.NumMeshes(), l.NumGeometries())
	require.Positive(t, l.Bytes())
	return l
}

// TestGPUOptiXInstancedIntersectMatchesReference: the OptiX instance
// layer (an IAS over one GAS per geometry) answers intersect like
// ref.InstancedScene under the tie rule (t within the conditioning-aware
// tolerance, the same face and instance except at exact ties and edges,
// every derived field the reference's derivation bit for bit) over mixed
// geometries, random affine transforms and coincident copies, before and
// after a transform update (an IAS rebuild).
func TestGPUOptiXInstancedIntersectMatchesReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := testscene.Rand(t)
		meshes := []geom.Mesh{gridMesh(9, 3), cloudMesh(3000, 0.1, 4), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 12, 9)}
		tb := tables(t, meshes...)
		for _, count := range []int{1, 3, 40, 700} {
			t.Run(fmt.Sprintf("instances=%d", count), func(t *testing.T) {
				in := testscene.RandomInstances(r, len(meshes), count, 1.5)
				if count > 3 {
					in = append(in, in[2], in[2]) // coincident copies: ties
				}
				x, err := geom.BuildInstances(tb, in)
				require.NoError(t, err)
				o, d, tmax := testscene.RandomRays(r, tb, 6000)
				vo, vd := workload.VolumeRays(6000, uint64(count))
				ao, ad := aimedAtInstances(r, tb, in, 3000)
				o, d = append(append(o, vo...), ao...), append(append(d, vd...), ad...)
				tmax = append(tmax, make([]float32, 9000)...)
				for i := 6000; i < len(tmax); i++ {
					tmax[i] = geom.DefaultTMax
				}
				rb := newRayBatch(t, s, o, d, tmax, nil)
				l := openOptiXInstanceLayer(t, s, tb, x)
				ip, err := newInstParity(tb, x)
				require.NoError(t, err)
				st := checkOptiXInstanced(t, s, l, ip, rb.dev, rb, nil)
				t.Logf("built: %v", st)
				require.Greater(t, st.Hits, len(o)/30, "the rays must hit")
				moved := make([]geom.Transform, x.Len())
				for i := range moved {
					moved[i] = testscene.RandomTransform(r, 1.5)
				}
				require.NoError(t, x.SetTransforms(0, moved))
				require.NoError(t, l.Update(s, x))
				st = checkOptiXInstanced(t, s, l, ip, rb.dev, rb, nil)
				t.Logf("updated: %v", st)
			})
		}
	})
}

// TestGPUOptiXInstancedLimitsAndMasks: with per-ray tmin and masks,
// inactive rows, per-instance masks and mesh masks (default, a hidden
// mesh, disjoint and overlapping bits), the OptiX instance layer answers
// like the reference restricted to the instances each row may see (its
// mask shares a bit with the instance's mask and with the mesh's mask),
// under the tie rule; it never reports an instance the row may not see.
// Instance masks changed through Update (an IAS rebuild) are followed.
func TestGPUOptiXInstancedLimitsAndMasks(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := testscene.Rand(t)
		meshes := []geom.Mesh{gridMesh(12, 2.5), cloudMesh(2000, 0.08, 7), testscene.Sphere([3]float32{.2, 0, .1}, .5, 14, 9)}
		tb := tables(t, meshes...)
		in := testscene.RandomInstances(r, len(meshes), 60, 1.5)
		for i := range in {
			in[i].Mask = geom.Mask(maskChoicesForTest[r.IntN(len(maskChoicesForTest))])
		}
		x, err := geom.BuildInstances(tb, in)
		require.NoError(t, err)
		const n = 1 << 14
		o, d, tmax := testscene.RandomRays(r, tb, n/2)
		ao, ad := aimedAtInstances(r, tb, in, n/2)
		o, d = append(o, ao...), append(d, ad...)
		for range n / 2 {
			tmax = append(tmax, geom.DefaultTMax)
		}
		tmin, mask := testscene.RandomLimits(r, n, tmax)
		active := make([]bool, n)
		for i := range active {
			active[i] = i%9 != 0
		}
		rb := newRayBatch(t, s, o, d, tmax, active)
		limited := rb.dev
		limited.TMin, limited.Mask = devBuf(t, s, tmin), devBuf(t, s, mask)
		l := openOptiXInstanceLayer(t, s, tb, x)
		ip, err := newInstParity(tb, x)
		require.NoError(t, err)
		run := func(what string) {
			for _, meshMasks := range [][]uint8{{0xFF, 0xFF, 0xFF}, {0x01, 0x00, 0x06}, {0x00, 0x04, 0xFF}, {0xFF, 0xFF, 0xFF}} {
				for m, v := range meshMasks {
					require.NoError(t, tb.SetMask(m, v))
				}
				var geoMask *launch.Buffer[uint8]
				if !tb.MasksDefault() {
					geoMask = devBuf(t, s, GeometryMasks(tb))
				}
				for _, lim := range []bool{false, true} {
					ip.tmin, ip.mask = nil, nil
					dev := rb.dev
					if lim {
						ip.tmin, ip.mask, dev = tmin, mask, limited
					}
					st := checkOptiXInstanced(t, s, l, ip, dev, rb, geoMask)
					t.Logf("%s: mesh masks %v limits %v: %v", what, meshMasks, lim, st)
					require.Positive(t, st.Hits, "%s: mesh masks %v limits %v: some rows must hit", what, meshMasks, lim)
				}
			}
		}
		run("built")
		for i := range x.Records {
			x.Records[i].Mask = maskChoicesForTest[r.IntN(len(maskChoicesForTest))]
		}
		x.Records[0].Mask = 0 // an instance no row sees
		require.NoError(t, l.Update(s, x))
		run("masks updated")
	})
}

// maskChoicesForTest are the instance masks the tests draw: single bits,
// overlaps, the default and the empty mask.
var maskChoicesForTest = []uint8{0x01, 0x02, 0x03, 0x04, 0x05, 0xFF, 0xFF, 0x00}

// TestGPUOptiXInstanceLayerClosed: a closed layer refuses queries and
// updates with ErrClosedAccel, and Close is idempotent.
func TestGPUOptiXInstanceLayerClosed(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		tb := tables(t, gridMesh(3, 1))
		x, err := geom.BuildInstances(tb, []geom.Instance{{Geometry: 0, Transform: geom.Identity}})
		require.NoError(t, err)
		l, err := NewOptiXInstanceLayer(s, tb, x)
		require.NoError(t, err)
		rb := newRayBatch(t, s, []float32{0.1, 0.1, 1}, []float32{0, 0, -1}, nil, nil)
		got := optixInstancedHits(t, s, l, rb.dev, nil, geom.FlagsAll)
		require.Equal(t, int32(0), got.InstanceID[0], "the ray hits the one instance")
		require.InDelta(t, 1, got.T[0], 1e-6)
		require.NoError(t, l.Close())
		require.NoError(t, l.Close())
		require.ErrorIs(t, l.Update(s, x), ErrClosedAccel)
		out := Hits{T: devOut[float32](t, s, 1)}
		require.ErrorIs(t, l.Intersect(s, rb.dev, geom.FlagsNone, nil, out, nil), ErrClosedAccel)
	})
}
