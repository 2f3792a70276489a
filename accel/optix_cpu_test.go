package accel

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
	cudasrc "github.com/rayd-go/rayd/ptx/src"
	"github.com/rayd-go/rayd/ref"
)

// optixSource reads the OptiX module's CUDA source, embedded in package
// ptx/src (so the test binary runs from any directory).
func optixSource(t *testing.T) string {
	t.Helper()
	b, err := cudasrc.Read("optix_trace.cu")
	if err != nil {
		t.Fatalf("ptx/src/optix_trace.cu: %v", err)
	}
	return string(b)
}

// TestOptiXParamsLayoutMatchesSource: every field of the CUDA Params struct
// sits at the byte offset the Go packer writes (the @N comments of the
// struct are checked against the field sizes, then against op*).
func TestOptiXParamsLayoutMatchesSource(t *testing.T) {
	src := optixSource(t)
	body := src[strings.Index(src, "struct Params {"):]
	body = body[:strings.Index(body, "};")]
	re := regexp.MustCompile(`(?m)^\s*([\w ]+?)\s*(\*?)\s*(\w+);\s*//\s*@(\d+)`)
	goOff := map[string]int{
		"handle": opHandle, "o": opO, "d": opD, "tmax": opTMax, "active": opActive, "vertices": opVertices,
		"faces": opFaces, "face_shape": opFaceShape, "face_local": opFaceLocal, "out_t": opOutT, "out_p": opOutP,
		"out_n": opOutN, "out_geo_n": opOutGeoN, "out_uv": opOutUV, "out_bary": opOutBary, "out_shape": opOutShape,
		"out_prim": opOutPrim, "out_local": opOutLocal, "out_global": opOutGlobal, "out_valid": opOutValid,
		"out_images": opOutImages, "out_visible": opOutVisible, "n": opN, "flags": opFlags, "max_bounces": opMaxBounces,
		"pad": opMaxBounces + 4, "tmin": opTMin, "ray_mask": opRayMask, "face_mask": opFaceMask,
	}
	next := 0
	seen := 0
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		size := 4
		if m[2] == "*" || strings.Contains(m[1], "long long") {
			size = 8
		}
		off, _ := strconv.Atoi(m[4])
		next = (next + size - 1) / size * size
		if off != next {
			t.Errorf("Params.%s: comment says @%d, C layout puts it at %d", m[3], off, next)
		}
		want, ok := goOff[m[3]]
		if !ok || want != off {
			t.Errorf("Params.%s @%d: Go packer offset %d (known %v)", m[3], off, want, ok)
		}
		next += size
		seen++
	}
	if seen != len(goOff) {
		t.Errorf("parsed %d Params fields, Go knows %d", seen, len(goOff))
	}
	if next != optixParamsBytes {
		t.Errorf("Params is %d bytes, Go packs %d", next, optixParamsBytes)
	}
}

// TestOptiXPipelineEntriesExist: every program a pipeline spec names is a
// parameterless extern "C" __global__ of the module source, and the built
// PTX (once the manifest has it) declares the params block.
func TestOptiXPipelineEntriesExist(t *testing.T) {
	src := optixSource(t)
	for _, spec := range allOptiXSpecs {
		for _, e := range specEntries(spec) {
			if !strings.Contains(src, "__global__ void "+e+"()") {
				t.Errorf("%s: entry %s not in the module source", spec.Raygen, e)
			}
		}
	}
	mod, err := ptx.Load(ModuleOptiX)
	if errors.Is(err, ptx.ErrUnknownModule) {
		t.Skipf("PTX module %s is not in the manifest yet (%v)", ModuleOptiX, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod.Image), ".b8 params["+strconv.Itoa(optixParamsBytes)+"];") {
		t.Errorf("PTX does not declare params[%d]", optixParamsBytes)
	}
	for _, spec := range allOptiXSpecs {
		for _, e := range specEntries(spec) {
			if _, ok := mod.Record.Entry(e); !ok {
				t.Errorf("PTX lacks entry %s", e)
			}
		}
	}
	if tgt, _ := strconv.Atoi(strings.TrimPrefix(mod.Record.Target, "sm_")); tgt >= 90 {
		t.Errorf("PTX target %s: OptiX modules must be compiled for compute_75..89", mod.Record.Target)
	}
}

// allOptiXSpecs are every pipeline of the backend, unmasked and masked.
var allOptiXSpecs = []launch.OptiXPipelineSpec{optixIntersectSpec, optixIntersectTSpec, optixReflectionsSpec,
	optixVisibleSpec, optixIntersectMaskedSpec, optixIntersectTMaskedSpec, optixReflectionsMaskedSpec, optixVisibleMaskedSpec}

// specEntries are the programs a pipeline spec names.
func specEntries(spec launch.OptiXPipelineSpec) []string {
	out := []string{spec.Raygen, spec.Miss, spec.ClosestHit}
	if spec.AnyHit != "" {
		out = append(out, spec.AnyHit)
	}
	return out
}

// TestOptiXMaskedPipelines: every masked spec pairs its unmasked twin's
// miss and closest-hit programs with the any-hit filter, and a zero OptiX
// refuses face masks of the wrong length.
func TestOptiXMaskedPipelines(t *testing.T) {
	for i, plain := range allOptiXSpecs[:4] {
		m := allOptiXSpecs[4+i]
		if m.Raygen != plain.Raygen+"_masked" || m.Miss != plain.Miss || m.ClosestHit != plain.ClosestHit ||
			m.AnyHit != "__anyhit__mask" || plain.AnyHit != "" || m.Options != plain.Options {
			t.Errorf("masked spec %+v does not mirror %+v", m, plain)
		}
	}
	var o OptiX
	if err := o.SetFaceMasks(nil, []uint8{1}); err == nil {
		t.Fatal("face masks for a structure of no faces must fail")
	}
	if o.Masked() {
		t.Fatal("a zero OptiX has no face masks")
	}
}

func TestOptiXParamsPacking(t *testing.T) {
	p := &optixParams{ordinal: 0}
	p.u64(opHandle, 0x1122334455667788)
	p.u32(opN, 7)
	p.u32(opFlags, uint32(geom.FlagsAll))
	if p.b[0] != 0x88 || p.b[7] != 0x11 || p.b[opN] != 7 || p.b[opFlags] != 7 {
		t.Fatalf("little-endian packing: % x", p.b[:16])
	}
	putBuf[float32](p, opTMax, "Rays.TMax", nil) // nil buffers stay null
	for _, b := range p.b[opTMax : opTMax+8] {
		if b != 0 {
			t.Fatal("a nil buffer must pack as a null pointer")
		}
	}
	putBuf(p, opO, "Rays.O", new(launch.Buffer[float32])) // a buffer of no device
	if !errors.Is(p.err, launch.ErrWrongDevice) {
		t.Fatalf("foreign buffer: %v", p.err)
	}
	var o OptiX
	if err := o.Intersect(nil, Rays{N: 1}, geom.FlagsAll, Hits{}); err == nil {
		t.Fatal("missing ray buffers must fail")
	}
	if err := o.TraceReflections(nil, Rays{}, 0, Reflections{}); err == nil {
		t.Fatal("maxBounces 0 must fail")
	}
	if err := o.Visible(nil, Segments{N: -1}, nil); err == nil {
		t.Fatal("negative segment count must fail")
	}
	if o.Refittable() || o.GASBytes() != 0 || !errors.Is(o.RefitGeometry(nil), ErrNotRefittable) {
		t.Fatal("a zero OptiX is not refittable")
	}
}

// perturbT multiplies every finite t of h by (1 + rel).
func perturbT(h *geom.Hits, rel float64) {
	for i, x := range h.T {
		if !math.IsInf(float64(x), 0) {
			h.T[i] = float32(float64(x) * (1 + rel))
		}
	}
}

func cloneHits(h *geom.Hits) *geom.Hits {
	c := *h
	for _, p := range []*[]float32{&c.T, &c.P, &c.N, &c.GeoN, &c.UV, &c.Bary} {
		*p = append([]float32(nil), (*p)...)
	}
	for _, p := range []*[]int32{&c.ShapeID, &c.PrimID, &c.LocalPrimID, &c.GlobalPrimID} {
		*p = append([]int32(nil), (*p)...)
	}
	return &c
}

// TestParityRuleOnReference exercises the tie rule without a GPU: the
// reference passes against itself and against small t perturbations;
// swapping to a duplicate face is an accepted tie; dropping a hit on a
// vertex is an accepted edge case; a wrong face or a dropped interior hit
// fails.
func TestParityRuleOnReference(t *testing.T) {
	one := geom.Mesh{Vertices: []float32{10, 10, 0, 11, 10, 0, 10, 11, 0}, Faces: []int32{0, 1, 2}} // apart from the rest
	tb := tables(t, one, one, gridMesh(6, 2), cloudMesh(300, 0.1, 5))
	sc, err := ref.NewScene(tb)
	if err != nil {
		t.Fatal(err)
	}
	ps := &parityScene{tb: tb, sc: sc}
	o, d, tmax, active := testRays(tb, 2048, 3)
	// Row 1 hits the duplicated triangle inside; row 2 hits it at a vertex.
	copy(o[3:9], []float32{10.25, 10.25, -1, 10, 10, -1})
	copy(d[3:9], []float32{0, 0, 1, 0, 0, 1})
	tmax[1], tmax[2], active[1], active[2] = 10, 10, true, true
	want, err := sc.Intersect(o, d, tmax, active, geom.FlagsAll)
	if err != nil {
		t.Fatal(err)
	}
	if want.PrimID[1] != 0 || want.PrimID[2] != 0 {
		t.Fatalf("fixture: rows 1, 2 hit %d, %d", want.PrimID[1], want.PrimID[2])
	}
	st, err := ps.checkHits(o, d, tmax, active, want, want)
	if err != nil || st.Ties != 0 || st.EdgeCases != 0 {
		t.Fatalf("reference against itself: %v (%v)", err, st)
	}
	got := cloneHits(want)
	perturbT(got, 3e-6)
	for i := range got.P { // p follows t only to within its tolerance
		got.P[i] *= 1 + 1e-7
	}
	if _, err := ps.checkHits(o, d, tmax, active, got, want); err != nil {
		t.Fatalf("t within tolerance rejected: %v", err)
	}
	got = cloneHits(want)
	got.PrimID[1], got.GlobalPrimID[1], got.ShapeID[1] = 1, 1, 1 // the duplicate face: an exact tie
	if st, err := ps.checkHits(o, d, tmax, active, got, want); err != nil || st.Ties != 1 {
		t.Fatalf("duplicate-face tie: %v (%v)", err, st)
	}
	got = cloneHits(want)
	got.SetMiss(2) // the vertex hit dropped: an edge case
	if st, err := ps.checkHits(o, d, tmax, active, got, want); err != nil || st.EdgeCases != 1 {
		t.Fatalf("vertex miss: %v (%v)", err, st)
	}
	got.SetMiss(1) // an interior hit dropped
	if _, err := ps.checkHits(o, d, tmax, active, got, want); err == nil {
		t.Fatal("a dropped interior hit passed")
	}
	got = cloneHits(want)
	got.PrimID[1], got.GlobalPrimID[1], got.ShapeID[1] = 5, 5, 2 // a face the ray does not hit
	got.LocalPrimID[1] = tb.FaceLocal[5]
	if _, err := ps.checkHits(o, d, tmax, active, got, want); err == nil {
		t.Fatal("a wrong face passed")
	}
	got = cloneHits(want)
	perturbT(got, 1e-3)
	if _, err := ps.checkHits(o, d, tmax, active, got, want); err == nil {
		t.Fatal("t off by 1e-3 passed")
	}
	// Reflections and visibility: the reference against itself, then a
	// corrupted prim.
	for _, b := range []int{1, 3} {
		wr, err := sc.TraceReflections(o, d, tmax, active, b)
		if err != nil {
			t.Fatal(err)
		}
		gr := hostReflections{valid: make([]uint8, len(wr.Valid)), t: wr.T, prim: append([]int32(nil), wr.PrimIDs...), images: wr.ImageSources}
		for i, v := range wr.Valid {
			if v {
				gr.valid[i] = 1
			}
		}
		if _, err := ps.checkReflections(o, d, tmax, active, b, gr, wr); err != nil {
			t.Fatalf("B=%d reference against itself: %v", b, err)
		}
		gr.prim[b] = 5 // row 1, bounce 0: a face not on the ray
		if _, err := ps.checkReflections(o, d, tmax, active, b, gr, wr); err == nil {
			t.Fatalf("B=%d: a wrong reflection face passed", b)
		}
	}
	end := make([]float32, len(o))
	for i := range end {
		end[i] = o[i] + d[i]*0.7
	}
	wv, _ := sc.Visible(o, end, active)
	gv := make([]uint8, len(wv))
	for i, v := range wv {
		if v {
			gv[i] = 1
		}
	}
	if _, err := ps.checkVisible(o, end, active, gv, wv); err != nil {
		t.Fatalf("visible against itself: %v", err)
	}
	for i := range wv {
		if !wv[i] && (active == nil || active[i]) {
			gv[i] = 1 // claim an interior blocker away
			if _, err := ps.checkVisible(o, end, active, gv, wv); err == nil {
				oi, di, tm, _ := segmentRay(row3f(o, i), row3f(end, i))
				h, _ := sc.Closest(oi, di, geom.MultipathTMin, tm)
				if !ps.edgeOrBound(oi, di, geom.MultipathTMin, tm, 0, rowHit{true, h.T, h.Prim}) {
					t.Fatalf("row %d: removing an interior blocker passed", i)
				}
			}
			gv[i] = 0
		}
	}
}
