package accel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// maskedRows is the row count of the masked GPU tests.
const maskedRows = 65536

// maskedHits runs a query into a poisoned full record (poisonedHits) and
// downloads every field.
func maskedHits(t testing.TB, s *launch.Stream, n int, run func(Hits) error) *geom.Hits {
	t.Helper()
	out := poisonedHits(t, s, n)
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	h := geom.NewHits(n, geom.FlagsAll)
	h.T, h.P, h.N = download(t, s, out.T, n), download(t, s, out.P, 3*n), download(t, s, out.N, 3*n)
	h.GeoN, h.UV, h.Bary = download(t, s, out.GeoN, 3*n), download(t, s, out.UV, 2*n), download(t, s, out.Bary, 3*n)
	h.ShapeID, h.PrimID = download(t, s, out.ShapeID, n), download(t, s, out.PrimID, n)
	h.LocalPrimID, h.GlobalPrimID = download(t, s, out.LocalPrimID, n), download(t, s, out.GlobalPrimID, n)
	return h
}

// maskedTables is a scene of three meshes with random visibility masks.
func maskedTables(t testing.TB, r *rand.Rand) *geom.Tables {
	t.Helper()
	one := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	tb := tables(t, gridMesh(24, 3), cloudMesh(6000, 0.1, 4), one)
	for m, v := range testscene.RandomMeshMasks(r, tb.NumMeshes()) {
		if err := tb.SetMask(m, v); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

// TestGPUMaskedQueriesMatchReference: on 65,536 rows with random per-ray
// tmin and masks over meshes with random masks, the masked intersect
// (plain and persistent), trace_reflections and visible of both node
// layouts write into poisoned records exactly what the CPU reference
// answers; with every mask back at the default the BVH leaves the masked
// kernels and still answers like the reference.
func TestGPUMaskedQueriesMatchReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := rand.New(rand.NewPCG(11, 3))
		tb := maskedTables(t, r)
		sc, err := ref.NewScene(tb)
		if err != nil {
			t.Fatal(err)
		}
		o, d, tmax, active := testRays(tb, maskedRows, 13)
		tmin, mask := testscene.RandomLimits(r, maskedRows, tmax)
		for _, width := range []int{2, 4} {
			testMasked(t, s, fmt.Sprintf("width %d", width), tb, sc, width, o, d, tmax, active, tmin, mask)
		}
	})
}

func testMasked(t *testing.T, s *launch.Stream, name string, tb *geom.Tables, sc *ref.Scene, width int,
	o, d, tmax []float32, active []bool, tmin []float32, mask []uint8) {
	bvh, err := BuildWith(s, tb, Options{Width: width})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bvh.Close() }()
	if err := bvh.SetFaceMasks(s, tb.FaceMasks()); err != nil {
		t.Fatal(err)
	}
	if !bvh.Masked() {
		t.Fatalf("%s: a non-default mesh mask must select the masked kernels", name)
	}
	ctx := context.Background()
	rb := newRayBatch(t, s, o, d, tmax, active)
	limited := rb.dev
	limited.TMin, limited.Mask = devBuf(t, s, tmin), devBuf(t, s, mask)
	lim := geom.RayLimits{TMin: tmin, Mask: mask}
	n := rb.dev.N
	for _, c := range []struct {
		what string
		rays Rays
		lim  geom.RayLimits
	}{{"mesh masks", rb.dev, geom.RayLimits{}}, {"tmin+masks", limited, lim},
		{"tmin only", withLimits(rb.dev, limited.TMin, nil), geom.RayLimits{TMin: tmin}}} {
		want, err := sc.IntersectLimitsContext(ctx, o, d, tmax, active, c.lim, geom.FlagsAll)
		if err != nil {
			t.Fatal(err)
		}
		got := maskedHits(t, s, n, func(h Hits) error { return bvh.Intersect(s, c.rays, geom.FlagsAll, h) })
		compareHits(t, name+" intersect "+c.what, got, want)
		pr := c.rays
		pr.Counter, pr.PersistentBlocks = devOut[uint32](t, s, 1), 5
		pers := maskedHits(t, s, n, func(h Hits) error { return bvh.Intersect(s, pr, geom.FlagsAll, h) })
		compareHits(t, name+" persistent intersect "+c.what, pers, want)
		for _, bounces := range []int{1, 3} {
			wantR, err := sc.TraceReflectionsLimitsContext(ctx, o, d, tmax, active, c.lim, bounces)
			if err != nil {
				t.Fatal(err)
			}
			compareReflections(t, fmt.Sprintf("%s reflections %s B=%d", name, c.what, bounces), s, bvh, c.rays, bounces, wantR)
		}
	}
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.7
	}
	compareVisible(t, name+" visible", s, bvh, sc, rb, end)
	// Back to the default masks: the unmasked kernels, the default answers.
	if err := bvh.SetFaceMasks(s, nil); err == nil {
		t.Fatalf("%s: a face mask table of the wrong length must be refused", name)
	}
	def := make([]uint8, tb.NumFaces())
	for i := range def {
		def[i] = geom.DefaultMask
	}
	if err := bvh.SetFaceMasks(s, def); err != nil || bvh.Masked() {
		t.Fatalf("%s: default masks: err %v, masked %v", name, err, bvh.Masked())
	}
	meshes := tb.Meshes()
	for m := range meshes {
		meshes[m].Mask = nil
	}
	plain, err := ref.NewScene(tables(t, meshes...))
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Intersect(o, d, tmax, active, geom.FlagsAll)
	if err != nil {
		t.Fatal(err)
	}
	got := maskedHits(t, s, n, func(h Hits) error { return bvh.Intersect(s, rb.dev, geom.FlagsAll, h) })
	compareHits(t, name+" intersect after reset", got, want)
}

// withLimits returns r with the given limit buffers.
func withLimits(r Rays, tmin *launch.Buffer[float32], mask *launch.Buffer[uint8]) Rays {
	r.TMin, r.Mask = tmin, mask
	return r
}

// compareReflections runs trace_reflections into a poisoned record and
// requires it to equal want bit for bit.
func compareReflections(t *testing.T, name string, s *launch.Stream, bvh *BVH, r Rays, bounces int, want *geom.Reflections) {
	t.Helper()
	m := r.N * bounces
	out := Reflections{Valid: poisoned[uint8](t, s, m, hitPoison), T: poisoned[float32](t, s, m, hitPoison), Prim: poisoned[int32](t, s, m, hitPoison),
		Images: poisoned[float32](t, s, 3*m, hitPoison)}
	if err := bvh.TraceReflections(s, r, bounces, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range download(t, s, out.Valid, m) {
		if (v != 0) != want.Valid[i] || v > 1 {
			t.Fatalf("%s: valid differs at slot %d: got %d, want %v", name, i, v, want.Valid[i])
		}
	}
	if i := sameBits32(download(t, s, out.T, m), want.T); i >= 0 {
		t.Fatalf("%s: t differs at slot %d", name, i)
	}
	if i := sameInts(download(t, s, out.Prim, m), want.PrimIDs); i >= 0 {
		t.Fatalf("%s: prim differs at slot %d", name, i)
	}
	if i := sameBits32(download(t, s, out.Images, 3*m), want.ImageSources); i >= 0 {
		t.Fatalf("%s: image differs at element %d", name, i)
	}
}

// compareVisible runs visible into a poisoned output and requires the
// reference's answer.
func compareVisible(t *testing.T, name string, s *launch.Stream, bvh *BVH, sc *ref.Scene, rb *rayBatch, end []float32) {
	t.Helper()
	want, err := sc.Visible(rb.o, end, rb.active)
	if err != nil {
		t.Fatal(err)
	}
	n := rb.dev.N
	vis := poisoned[uint8](t, s, n, hitPoison)
	seg := Segments{Start: rb.dev.O, End: devBuf(t, s, end), Active: rb.dev.Active, N: n}
	if err := bvh.Visible(s, seg, vis); err != nil {
		t.Fatal(err)
	}
	for i, v := range download(t, s, vis, n) {
		if (v != 0) != want[i] || v > 1 {
			t.Fatalf("%s differs at row %d: got %d, want %v", name, i, v, want[i])
		}
	}
}
