package accel

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUOptiXMaskedParity: with per-ray tmin and masks and with face masks
// (a hidden mesh, disjoint and overlapping bits, then every mask reset),
// both backends answer intersect (every flag, and t only), trace_reflections
// and visible like the CPU reference on 65,536 rows written into poisoned
// outputs: OptiX under the tie rule of TestGPUOptiXParity (its masked
// pipelines), the BVH needing no tie or edge allowance (its masked
// kernels). No backend ever reports a face its row may not see.
func TestGPUOptiXMaskedParity(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(testscene.Seed(t), 17))
		tb := tables(t, cloudMesh(4000, 0.06, 45), gridMesh(20, 2.5),
			testscene.Sphere([3]float32{.3, -.2, .1}, .5, 20, 10), cloudMesh(300, 0.2, 46))
		sc, err := ref.NewScene(tb)
		if err != nil {
			t.Fatal(err)
		}
		bs := backends(t, s, tb)
		const n = 1 << 16
		o, d, tmax := testscene.RandomRays(r, tb, n)
		tmin, mask := testscene.RandomLimits(r, n, tmax)
		active := make([]bool, n)
		for i := range active {
			active[i] = i%9 != 0
		}
		rb := newRayBatch(t, s, o, d, tmax, active)
		limited := rb.dev
		limited.TMin, limited.Mask = devBuf(t, s, tmin), devBuf(t, s, mask)
		for _, meshMasks := range [][]uint8{{0xFF, 0xFF, 0xFF, 0xFF}, {0x01, 0x00, 0x06, 0x02}, {0x00, 0x04, 0x01, 0xFF},
			{0xFF, 0xFF, 0xFF, 0xFF}} {
			for m, v := range meshMasks {
				if err := tb.SetMask(m, v); err != nil {
					t.Fatal(err)
				}
			}
			sc.ReloadMasks()
			for name, b := range bs {
				if err := b.(interface {
					SetFaceMasks(*launch.Stream, []uint8) error
				}).SetFaceMasks(s, tb.FaceMasks()); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			for _, lim := range []bool{false, true} {
				ps := &parityScene{tb: tb, sc: sc}
				dev := rb.dev
				if lim {
					ps.tmin, ps.mask, dev = tmin, mask, limited
				}
				for name, b := range bs {
					st := checkMaskedParity(t, s, b, ps, dev, o, d, tmax, active)
					t.Logf("%s masks %v limits %v: %v", name, meshMasks, lim, st)
					if name == "bvh" && (st.Ties != 0 || st.EdgeCases != 0) {
						t.Fatalf("masks %v limits %v: the BVH needed the tie rule (%v)", meshMasks, lim, st)
					}
				}
			}
		}
	})
}

// checkMaskedParity runs intersect (FlagsAll, then t only), reflections
// (B = 3) and visible of b with dev's limits into poisoned outputs and
// compares them with the reference (ps's limits) under the tie rule.
func checkMaskedParity(t *testing.T, s *launch.Stream, b queryBackend, ps *parityScene, dev Rays,
	o, d, tmax []float32, active []bool) parityStats {
	t.Helper()
	ctx := context.Background()
	n := dev.N
	lim := geom.RayLimits{TMin: ps.tmin, Mask: ps.mask}
	want, err := ps.sc.IntersectLimitsContext(ctx, o, d, tmax, active, lim, geom.FlagsAll)
	if err != nil {
		t.Fatal(err)
	}
	all := deviceHits(t, s, n, geom.FlagsAll, func(h Hits) error {
		poisonHits(t, s, h)
		return b.Intersect(s, dev, geom.FlagsAll, h)
	})
	var st parityStats
	hs, err := ps.checkHits(o, d, tmax, active, all, want)
	if err != nil {
		t.Fatalf("intersect: %v", err)
	}
	st.add(hs)
	tOnly := deviceHits(t, s, n, geom.FlagsNone, func(h Hits) error {
		poisonHits(t, s, h)
		return b.Intersect(s, dev, geom.FlagsNone, h)
	})
	for i := range n {
		a, g := float64(all.T[i]), float64(tOnly.T[i])
		if !(math.IsInf(a, 1) && math.IsInf(g, 1)) && math.Abs(a-g) > tolT(a) {
			t.Fatalf("intersect flags None: row %d t %v, flags All %v", i, g, a)
		}
	}
	const bounces = 3
	wr, err := ps.sc.TraceReflectionsLimitsContext(ctx, o, d, tmax, active, lim, bounces)
	if err != nil {
		t.Fatal(err)
	}
	m := n * bounces
	out := Reflections{Valid: poisoned[uint8](t, s, m, 0xab), T: poisoned[float32](t, s, m, poisonF32),
		Prim: poisoned[int32](t, s, m, poisonI32), Images: poisoned[float32](t, s, 3*m, poisonF32)}
	if err := b.TraceReflections(s, dev, bounces, out); err != nil {
		t.Fatal(err)
	}
	got := hostReflections{valid: download(t, s, out.Valid, m), t: download(t, s, out.T, m),
		prim: download(t, s, out.Prim, m), images: download(t, s, out.Images, 3*m)}
	rs, err := ps.checkReflections(o, d, tmax, active, bounces, got, wr)
	if err != nil {
		t.Fatalf("reflections: %v", err)
	}
	st.add(rs)
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.7
	}
	wv, err := ps.sc.Visible(o, end, active)
	if err != nil {
		t.Fatal(err)
	}
	vis := poisoned[uint8](t, s, n, 0xab)
	if err := b.Visible(s, Segments{Start: dev.O, End: devBuf(t, s, end), Active: dev.Active, N: n}, vis); err != nil {
		t.Fatal(err)
	}
	vs, err := ps.checkVisible(o, end, active, download(t, s, vis, n), wv)
	if err != nil {
		t.Fatalf("visible: %v", err)
	}
	st.add(vs)
	return st
}

// poisonHits fills every buffer of h with the hit poison.
func poisonHits(t *testing.T, s *launch.Stream, h Hits) {
	t.Helper()
	for _, b := range []*launch.Buffer[float32]{h.T, h.P, h.N, h.GeoN, h.UV, h.Bary} {
		if b != nil {
			if err := b.Memset32(s, hitPoison); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, b := range []*launch.Buffer[int32]{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID} {
		if b != nil {
			if err := b.Memset32(s, hitPoison); err != nil {
				t.Fatal(err)
			}
		}
	}
}
