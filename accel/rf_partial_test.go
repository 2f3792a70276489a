package accel

import (
	"math"
	"slices"
	"testing"

	"github.com/rayd-go/rayd/rf"
)

// TestRFPartialLaunchesMatchKernels drives the resident-partial launches
// (the accumulations into a partial, its zeroing and its folds) through the
// recorder against the CUDA signatures, for both node layouts and small and
// large grids.
func TestRFPartialLaunchesMatchKernels(t *testing.T) {
	rec := &rfRecorder{seen: map[string]int{}, shared: map[string]uint32{}, kernels: map[string]map[string][]cParam{
		ModuleRFAccum: parseKernels(t, "rf_accum.cu"),
		ModuleRFRefl:  parseKernels(t, "rf_refl.cu"),
		ModuleRFFold:  parseKernels(t, "rf_fold.cu"),
	}}
	p := RFPartial{Acc: buf[float64](), Ints: buf[int32]()}
	for _, width := range []int{2, 4} {
		b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: width}, sms: 132}
		for _, res := range []int{4, 100} {
			g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: res, Res1: res}
			cells := res * res
			o := rf.DefaultAccumOptions()
			o.DirectSamples, o.KellerSamples, o.SuffixSamples, o.LaneOffset, o.LaneCount = 100, 50, 50, 7, 150
			for _, w := range [][2]int{{7, 150}, {0, 100}} { // lanes of all three kinds; direct lanes only
				o.LaneOffset, o.LaneCount = w[0], w[1]
				if err := b.launchDfrDirectPartial(rec, DfrAccumLaunch{States: buf[uint32](), NumStates: 3, Grid: g, Options: o}, p, cells); err != nil {
					t.Fatal(err)
				}
			}
			co := rf.DefaultCoherentOptions()
			co.LaneCount = 3 * cells
			if err := b.launchDfrCoherentPartial(rec, DfrCoherentLaunch{States: buf[uint32](), NumStates: 3, Grid: g, Options: co}, p, cells); err != nil {
				t.Fatal(err)
			}
			rin := ReflAccumLaunch{O: buf[float32](), D: buf[float32](), TxPosition: buf[float32](), N: 10,
				Material: buf[float32](), NumFaces: 3, MaxBounces: 2, Options: rf.DefaultReflOptions(),
				Grid: rf.AccumGrid{Axis: 1, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: res, Res1: res}}
			if err := b.launchReflPartial(rec, rin, p, cells); err != nil {
				t.Fatal(err)
			}
			shape := ReflShape(cells)
			if err := launchZeroPartial(rec, p, shape); err != nil {
				t.Fatal(err)
			}
			for _, out := range []bool{false, true} {
				dst := buf[uint32]()
				if !out {
					dst = nil
				}
				if err := launchFoldPartial(rec, p, PartialAddr{Acc: 1 << 40, Ints: 1 << 41}, shape, dst); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for module, entries := range rec.kernels {
		for entry := range entries {
			if module != ModuleRFAccum && module != ModuleRFRefl && rec.seen[module+"."+entry] == 0 {
				t.Errorf("kernel %s.%s is never launched by the Go side", module, entry)
			}
		}
	}
	for _, k := range []string{"rf_accum.rf_accum_keller", "rf_accum.rf_accum_suffix4", "rf_accum.rf_accum_direct_only4", "rf_accum.rf_accum_coherent4", "rf_refl.rf_accum_reflections4"} {
		if rec.seen[k] == 0 {
			t.Errorf("%s is never launched into a partial", k)
		}
	}
}

// TestRFPartialLaunchesCheckTheirInputs: an empty window queues nothing;
// a wedge collection, a missing or short buffer and a bad window are
// refused before any launch.
func TestRFPartialLaunchesCheckTheirInputs(t *testing.T) {
	rec := &rfRecorder{seen: map[string]int{}, shared: map[string]uint32{}}
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: 2}, sms: 4}
	g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 2, Res1: 2}
	p := RFPartial{Acc: buf[float64](), Ints: buf[int32]()}
	o := rf.DefaultAccumOptions()
	o.DirectSamples, o.LaneCount = 10, 0
	if err := b.launchDfrDirectPartial(rec, DfrAccumLaunch{States: buf[uint32](), NumStates: 1, Grid: g, Options: o}, p, 4); err != nil {
		t.Fatalf("empty window: %v", err)
	}
	ro := rf.DefaultReflOptions()
	ro.CollectWedges, ro.WedgeCapacity = true, 4
	bad := o
	bad.LaneCount = 11
	rin := ReflAccumLaunch{O: buf[float32](), D: buf[float32](), TxPosition: buf[float32](), N: 1, Material: buf[float32](),
		Grid: rf.AccumGrid{Axis: 2, Res0: 2, Res1: 2}, Options: ro}
	for name, err := range map[string]error{
		"window":  b.accumDfrDirectPartial(rec, DfrAccumLaunch{States: buf[uint32](), NumStates: 1, Grid: g, Options: bad}, p),
		"no ints": b.accumDfrDirectPartial(rec, DfrAccumLaunch{Grid: g, Options: o}, RFPartial{Acc: p.Acc}),
		"wedges":  b.accumulateReflectionsPartial(rec, rin, p),
		"zero":    zeroPartial(rec, RFPartial{}, DfrDirectShape(4)),
		"fold":    foldPartial(rec, p, PartialAddr{}, PartialShape{Acc: -1}, nil),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(rec.seen) != 0 {
		t.Errorf("launched: %v", rec.seen)
	}
}

// TestRFDecodeWords: the folded words decode into package rf's results,
// the counters bit for bit (negative values included) and the grids as
// their float32 values.
func TestRFDecodeWords(t *testing.T) {
	const res0, res1 = 2, 3
	c := res0 * res1
	f := func(v float32) uint32 { return math.Float32bits(v) }
	words := make([]uint32, DfrDirectShape(c).Words())
	for i := range 2 * c {
		words[i] = f(float32(i) + 0.5)
	}
	for k := range 7 {
		words[2*c+k] = uint32(int32(k) - 3)
	}
	d := DecodeDfrAccumWords(words, res0, res1)
	if d.Power[1] != 1.5 || d.FieldXRe[0] != float64(c)+0.5 || slices.ContainsFunc(d.FieldZIm, func(v float64) bool { return v != 0 }) ||
		len(d.FieldYRe) != c || d.DirectCount != -3 || d.EdgeUses != 3 {
		t.Errorf("accum_dfr_direct: %+v", d)
	}
	words = make([]uint32, DfrCoherentShape(c).Words())
	words[c] = f(-2)
	words[2*c+1], words[3*c+2], words[4*c+3] = 4, 5, 6
	co := DecodeDfrCoherentWords(words, res0, res1)
	if co.DirectFieldXIm[0] != -2 || co.DirectCount[1] != 4 || co.VisibilityRejectCount[2] != 5 || co.UtdRejectCount[3] != 6 ||
		len(co.MultiCount) != c || len(co.MultiFieldZIm) != c {
		t.Errorf("accum_dfr_coherent_direct: %+v", co)
	}
	words = make([]uint32, ReflShape(c).Words())
	words[6*c+1], words[7*c], words[7*c+1] = f(3), 9, 2
	g := rf.AccumGrid{Res0: res0, Res1: res1}
	r := DecodeReflAccumWords(words, 17, 3, g)
	if r.FieldZIm[1] != 3 || r.ReflectionCount != 9 || r.RayCount != 17 || r.MaxBounces != 3 || r.Wedges.Capacity != 0 {
		t.Errorf("accumulate_reflections: %+v", r)
	}
}

// TestPackDfrStatesIntoReusesAndClears: packing into a used buffer gives
// the records of a fresh pack (no word of the previous content survives)
// and reuses the buffer when it is large enough.
func TestPackDfrStatesIntoReusesAndClears(t *testing.T) {
	st := &rf.DfrStates{EdgeIndex: []int32{1, 2}, Prim0: []int32{-1, -1}, Prim1: []int32{-1, -1}}
	for range 2 {
		st.EdgePos, st.EdgeDir = append(st.EdgePos, 1, 2, 3), append(st.EdgeDir, 0, 0, 1)
		st.N0, st.N1, st.Src = append(st.N0, 1, 0, 0), append(st.N1, 0, 1, 0), append(st.Src, 0, 0, 2)
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, -1), append(st.EdgeTMax, 1)
		st.ExteriorAngle, st.SrcPower = append(st.ExteriorAngle, 4), append(st.SrcPower, 1)
	}
	want := PackDfrStates(st, 2, nil, []bool{false, true}, 0, nil)
	dst := make([]uint32, 3*DfrStateWords)
	for i := range dst {
		dst[i] = 0xdeadbeef
	}
	got := PackDfrStatesInto(dst, st, 2, nil, []bool{false, true}, 0, nil)
	if !slices.Equal(got, want) {
		t.Errorf("packed into a used buffer: %v", got)
	}
	if &got[0] != &dst[0] {
		t.Error("a large enough buffer was not reused")
	}
	if grown := PackDfrStatesInto(dst[:0:DfrStateWords], st, 2, nil, []bool{false, true}, 0, nil); !slices.Equal(grown, want) {
		t.Errorf("grown: %v", grown)
	}
}
