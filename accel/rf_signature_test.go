package accel

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// rfRecorder checks RF launches against the CUDA signatures.
type rfRecorder struct {
	kernels map[string]map[string][]cParam
	seen    map[string]int
	shared  map[string]uint32
}

func argKind(a any) string {
	switch v := a.(type) {
	case int32:
		return "s32"
	case uint32:
		return "u32"
	case int64:
		return "s64"
	case uint64:
		return "u64"
	case float32:
		return "f32"
	case float64:
		return "f64"
	default:
		if a == launch.Null {
			return "ptr"
		}
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Pointer && strings.Contains(rv.Type().String(), "launch.Buffer") && !rv.IsNil() {
			return "ptr"
		}
	}
	return fmt.Sprintf("%T", a)
}

// residentBlocks answers 5 blocks per multiprocessor for a kernel of the
// sources and refuses any other.
func (r *rfRecorder) residentBlocks(module, entry string, block launch.Dim3, shared uint32) (int, error) {
	if _, ok := r.kernels[module][entry]; !ok && r.kernels != nil {
		return 0, fmt.Errorf("no kernel %s.%s in the sources", module, entry)
	}
	return 5, nil
}

func (r *rfRecorder) launchShared(module, entry string, grid, block launch.Dim3, shared uint32, args ...any) error {
	ps, ok := r.kernels[module][entry]
	if !ok {
		return fmt.Errorf("no kernel %s.%s in the sources", module, entry)
	}
	if len(args) != len(ps) {
		return fmt.Errorf("%s: %d arguments, kernel has %d", entry, len(args), len(ps))
	}
	if grid.X == 0 || block.X != TraceThreads || shared > 48<<10 {
		return fmt.Errorf("%s: launch shape %v × %v, %d shared bytes", entry, grid, block, shared)
	}
	for i, a := range args {
		got, want := argKind(a), ps[i].kind
		if got == "s32" && want == "u32" || got == "u32" && want == "s32" {
			got = want
		}
		if got != want {
			return fmt.Errorf("%s: argument %d (%s) is %T, kernel wants %s", entry, i, ps[i].name, a, want)
		}
	}
	r.seen[module+"."+entry]++
	r.shared[module+"."+entry] = max(r.shared[module+"."+entry], shared)
	return nil
}

func (r *rfRecorder) zero(b interface {
	Memset8(*launch.Stream, uint8) error
}) error {
	if reflect.ValueOf(b).IsNil() {
		return fmt.Errorf("zero of a nil buffer")
	}
	return nil
}

func (r *rfRecorder) allocF64(int) (*launch.Buffer[float64], error) { return buf[float64](), nil }
func (r *rfRecorder) free(*launch.Buffer[float64])                  {}

// TestRFLaunchArgumentsMatchKernels drives every RF launch path through the
// recorder, for both node layouts, small and large grids (shared and global
// accumulation) and every optional input set and unset.
func TestRFLaunchArgumentsMatchKernels(t *testing.T) {
	rec := &rfRecorder{seen: map[string]int{}, shared: map[string]uint32{}, kernels: map[string]map[string][]cParam{
		ModuleRFAccum: parseKernels(t, "rf_accum.cu"),
		ModuleRFRefl:  parseKernels(t, "rf_refl.cu"),
		ModuleRFPaths: parseKernels(t, "rf_paths.cu"),
	}}
	for _, width := range []int{2, 4, 8} {
		b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: width}, sms: 132}
		for _, res := range []int{4, 100} {
			g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: res, Res1: res}
			cells := res * res
			o := rf.DefaultAccumOptions()
			o.DirectSamples, o.KellerSamples, o.SuffixSamples, o.LaneOffset, o.LaneCount = 100, 50, 50, 7, 150
			for _, acc := range []bool{false, true} {
				// Lanes of all three kinds (rf_accum_direct_only, rf_accum_keller, rf_accum_suffix), then direct lanes only.
				for _, w := range [][2]int{{7, 150}, {10, 90}} {
					o.LaneOffset, o.LaneCount = w[0], w[1]
					in := DfrAccumLaunch{States: buf[uint32](), NumStates: 3, Grid: g, Options: o, Accumulate: acc}
					if err := b.launchDfrDirect(rec, in, DfrAccumOut{Grids: buf[float32](), Counters: buf[int32]()}, cells); err != nil {
						t.Fatal(err)
					}
				}
				co := rf.DefaultCoherentOptions()
				co.LaneCount = 3 * cells
				cin := DfrCoherentLaunch{States: buf[uint32](), NumStates: 3, Grid: g, Options: co, Accumulate: acc}
				if err := b.launchDfrCoherent(rec, cin, DfrCoherentOut{Grids: buf[float32](), Counts: buf[int32]()}, cells); err != nil {
					t.Fatal(err)
				}
			}
			for _, full := range []bool{false, true} {
				ro := rf.DefaultReflOptions()
				rin := ReflAccumLaunch{O: buf[float32](), D: buf[float32](), TxPosition: buf[float32](), N: 10,
					Material: buf[float32](), NumFaces: 3, MaxBounces: 2, Options: ro,
					Grid: rf.AccumGrid{Axis: 1, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: res, Res1: res}}
				rout := ReflAccumOut{Grids: buf[float32](), Counters: buf[int32]()}
				if full {
					rin.TMax, rin.TxPolarization, rin.Active = buf[float32](), buf[float32](), buf[uint8]()
					rin.Options.CollectWedges, rin.Options.WedgeCapacity, rin.Options.IncludeLOS = true, 16, true
					rout.Wedges = buf[uint32]()
				}
				if err := b.launchReflAccum(rec, rin, rout, cells); err != nil {
					t.Fatal(err)
				}
				pin := DfrPathsLaunch{States: buf[uint32](), NumStates: 3, Rx: buf[float32](), NumRx: 2, NumTx: 2,
					Wavelength: 1, LaneOffset: 1, LaneCount: 5}
				if full {
					pin.TxPolarization, pin.PolRows, pin.Layout = buf[float32](), 2, rf.SourceLane
				}
				pout := DfrPathsOut{Rows: buf[uint32](), Count: buf[int32](), Capacity: 12}
				if err := b.launchDfrPaths(rec, pin, pout); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for module, entries := range rec.kernels {
		for entry := range entries {
			if rec.seen[module+"."+entry] == 0 {
				t.Errorf("kernel %s.%s is never launched by the Go side", module, entry)
			}
		}
	}
	if rec.shared[ModuleRFAccum+".rf_accum_suffix"] != 16*rfWarps*16 || rec.shared[ModuleRFAccum+".rf_accum_direct_only"] != 16*rfWarps*16 || rec.shared[ModuleRFRefl+".rf_accum_reflections"] != 16*rfWarps*56 {
		t.Errorf("shared memory per launch: %v", rec.shared)
	}
}

// TestRFCheckedLaunchesRejectBadSizes exercises the size checks in front of
// the launches (no device needed: they fail before any launch).
func TestRFCheckedLaunchesRejectBadSizes(t *testing.T) {
	rec := &rfRecorder{seen: map[string]int{}, shared: map[string]uint32{}}
	b := &BVH{numTris: 3, nodes: buf[uint32](), tris: buf[uint32](), opt: Options{Width: 2}, sms: 4}
	g := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 2, Res1: 2}
	o := rf.DefaultAccumOptions()
	o.DirectSamples, o.LaneCount = 10, 11
	for name, err := range map[string]error{
		"window": b.accumDfrDirect(rec, DfrAccumLaunch{States: buf[uint32](), NumStates: 1, Grid: g, Options: o},
			DfrAccumOut{Grids: buf[float32](), Counters: buf[int32]()}),
		"grid": b.accumDfrDirect(rec, DfrAccumLaunch{Grid: rf.DfrGrid{Axis: 3, Res0: 1, Res1: 1}}, DfrAccumOut{}),
		"sizes": b.accumDfrCoherent(rec, DfrCoherentLaunch{States: buf[uint32](), NumStates: 1, Grid: g,
			Options: rf.CoherentOptions{Wavelength: 1, LaneCount: 4}}, DfrCoherentOut{Grids: buf[float32](), Counts: buf[int32]()}),
		"refl":         b.accumulateReflections(rec, ReflAccumLaunch{N: 1}, ReflAccumOut{}),
		"paths-layout": b.traceDfrPaths(rec, DfrPathsLaunch{Layout: 7}, DfrPathsOut{Rows: buf[uint32](), Count: buf[int32]()}),
		"paths-capacity": b.traceDfrPaths(rec, DfrPathsLaunch{NumStates: 1, NumRx: 1, NumTx: 2, Layout: rf.SourceLane, LaneCount: 2},
			DfrPathsOut{Rows: buf[uint32](), Count: buf[int32](), Capacity: 1}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(rec.seen) != 0 {
		t.Errorf("launched after a failed check: %v", rec.seen)
	}
}

// TestRFWaveGridTakesTheResidentBlocks: an accumulation grid is rfWaves
// waves of the blocks the runner says fit per multiprocessor, or one block
// per 128 lanes when fewer lanes fill fewer; a kernel the runner cannot
// size is an error.
func TestRFWaveGridTakesTheResidentBlocks(t *testing.T) {
	rec := &rfRecorder{kernels: map[string]map[string][]cParam{ModuleRFAccum: parseKernels(t, "rf_accum.cu")}}
	b := &BVH{sms: 132}
	for _, c := range []struct {
		n    int
		want uint32
	}{{1 << 26, 5 * rfWaves * 132}, {300, 3}, {0, 1}, {5 * rfWaves * 132 * TraceThreads, 5 * rfWaves * 132}} {
		g, err := b.rfWaveGrid(rec, ModuleRFAccum, "rf_accum_keller", c.n, 0)
		if err != nil || g.X != c.want {
			t.Errorf("%d lanes: grid %v, %v; want %d blocks", c.n, g, err, c.want)
		}
	}
	if _, err := b.rfWaveGrid(rec, ModuleRFAccum, "rf_accum_direct", 300, 0); err == nil {
		t.Error("a kernel outside the sources was sized")
	}
}
