package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// Per-warp shared-memory histograms are used up to these cell counts (the
// kernels keep RF_WARPS private float64 grids per block); larger grids
// accumulate with global float64 atomics.
const (
	rfWarps             = 4
	rfSmemDirectCells   = 256
	rfSmemCoherentCells = 128
	rfSmemReflCells     = 64
	rfBlocksPerSM       = 16
)

// DfrAccumLaunch is one accum_dfr_direct launch (spec §6.2): device-resident
// packed states (PackDfrStates over the logical state count), the grid and
// scalar options in rf's types, and a resolved lane window.
type DfrAccumLaunch struct {
	States    *launch.Buffer[uint32] // NumStates·DfrStateWords
	NumStates int                    // S
	Grid      rf.DfrGrid
	Options   rf.AccumOptions // Wavelength, sample counts, Seed, LaneOffset; LaneCount ≥ 0
	// Accumulate adds to the outputs instead of overwriting them, so that
	// windows launched one after another sum into one result.
	Accumulate bool
}

// DfrAccumOut is the device-resident DfrAccum: Grids holds the seven
// float32 grids of cells values each, in rf.AccumResult order (power, field
// x re, x im, y re, y im, z re, z im); Counters the seven int32 counters in
// rf.AccumResult order (direct, keller, suffix, vis_rejects,
// edge_vis_rejects, utd_rejects, edge_uses).
type DfrAccumOut struct {
	Grids    *launch.Buffer[float32]
	Counters *launch.Buffer[int32]
}

// DfrCoherentLaunch is one accum_dfr_coherent_direct launch (spec §6.4).
type DfrCoherentLaunch struct {
	States     *launch.Buffer[uint32]
	NumStates  int
	Grid       rf.DfrGrid
	Options    rf.CoherentOptions // LaneCount ≥ 0
	Accumulate bool
}

// DfrCoherentOut is the device-resident DfrCoherentAccum: Grids holds the
// twelve float32 grids in rf.CoherentResult order (direct x re, x im, y re,
// y im, z re, z im, then the multi fields); Counts the per-cell int32 rows
// direct_count, visibility_reject_count, utd_reject_count (multi_count is
// always zero and has no row).
type DfrCoherentOut struct {
	Grids  *launch.Buffer[float32]
	Counts *launch.Buffer[int32]
}

// rfRunner is where the RF launches go: a stream, or a recorder in tests.
type rfRunner interface {
	launchShared(module, entry string, grid, block launch.Dim3, shared uint32, args ...any) error
	zero(b interface {
		Memset8(*launch.Stream, uint8) error
	}) error
	allocF64(n int) (*launch.Buffer[float64], error)
	free(b *launch.Buffer[float64])
	// residentBlocks is how many blocks of block's threads with shared
	// dynamic bytes of module.entry one multiprocessor holds at once.
	residentBlocks(module, entry string, block launch.Dim3, shared uint32) (int, error)
}

type rfStream struct{ s *launch.Stream }

func (r rfStream) launchShared(module, entry string, grid, block launch.Dim3, shared uint32, args ...any) error {
	k, err := r.s.Device().Kernel(module, entry)
	if err != nil {
		return err
	}
	return k.Launch(r.s, grid, block, shared, args...)
}

func (r rfStream) zero(b interface {
	Memset8(*launch.Stream, uint8) error
}) error {
	return b.Memset8(r.s, 0)
}

func (r rfStream) allocF64(n int) (*launch.Buffer[float64], error) {
	b, err := launch.AllocAsync[float64](r.s, n)
	if err != nil {
		return nil, err
	}
	if err := b.Memset8(r.s, 0); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

func (r rfStream) free(b *launch.Buffer[float64]) { _ = b.Close() }

func (r rfStream) residentBlocks(module, entry string, block launch.Dim3, shared uint32) (int, error) {
	k, err := r.s.Device().Kernel(module, entry)
	if err != nil {
		return 0, err
	}
	return k.ResidentBlocksPerSM(block, shared)
}

// gridParams are the grid kernel arguments: axis, pos, min0, max0, min1,
// max1, res0, res1, area (resolved as rf does: |span0·span1|/cells unless
// CellArea is set).
func gridParams(g rf.DfrGrid) []any {
	area := math.Abs((g.Coord0Max-g.Coord0Min)*(g.Coord1Max-g.Coord1Min)) / float64(g.Res0*g.Res1)
	if g.CellArea != 0 {
		area = g.CellArea
	}
	return []any{int32(g.Axis), g.Position, g.Coord0Min, g.Coord0Max, g.Coord1Min, g.Coord1Max,
		int32(g.Res0), int32(g.Res1), area}
}

// rfWaves is how many waves of resident blocks an accumulation launch
// takes (rfWaveGrid). Against 16 blocks per multiprocessor (3.2 waves of
// the direct-only kernel, 4 of the Keller and suffix ones), one wave and
// two both ran the direct accumulations 2-4% faster and the reflections
// 3-8%; two ran the 67M-sample fixture 1.5% under one.
const rfWaves = 2

// rfWaveGrid is the launch shape of the grid-stride accumulation kernel
// module.entry over n lanes: rfWaves whole waves (the blocks every
// multiprocessor holds at once, by the driver's occupancy calculation, on
// every multiprocessor), or fewer blocks when n lanes fill fewer. A grid of
// whole waves has no last partial wave of blocks running nearly alone.
func (b *BVH) rfWaveGrid(run rfRunner, module, entry string, n int, shared uint32) (launch.Dim3, error) {
	per, err := run.residentBlocks(module, entry, launch.Threads(TraceThreads), shared)
	if err != nil {
		return launch.Dim3{}, err
	}
	wave := max(per, 1) * max(b.sms, 1) * rfWaves
	return launch.Blocks(min(max(n, 1), wave*TraceThreads), TraceThreads), nil
}

// rfGrid is the launch shape of a grid-stride RF kernel over n lanes.
func (b *BVH) rfGrid(n int) launch.Dim3 {
	return launch.Blocks(min(max(n, 1), rfBlocksPerSM*max(b.sms, 1)*TraceThreads), TraceThreads)
}

func checkGridShape(g rf.DfrGrid) (int, error) {
	if g.Axis < 0 || g.Axis > 2 || g.Res0 <= 0 || g.Res1 <= 0 || int64(g.Res0)*int64(g.Res1) > math.MaxInt32 {
		return 0, fmt.Errorf("accel: invalid grid (axis %d, %d×%d cells)", g.Axis, g.Res0, g.Res1)
	}
	return g.Res0 * g.Res1, nil
}

func checkWindow(offset, count, total int) error {
	if offset < 0 || count < 0 || int64(offset)+int64(count) > int64(total) {
		return fmt.Errorf("accel: lane window (%d, %d) outside [0, %d)", offset, count, total)
	}
	return nil
}

// AccumDfrDirect queues accum_dfr_direct (spec §6.2) for the window of in on
// s. The inputs must be validated by package rf (rf.AccumDfrDirect's rules);
// this checks buffer sizes only. Grids are summed in float64 on the device
// and added to (or, without Accumulate, written into) the float32 outputs.
func (b *BVH) AccumDfrDirect(s *launch.Stream, in DfrAccumLaunch, out DfrAccumOut) error {
	return b.accumDfrDirect(rfStream{s}, in, out)
}

func (b *BVH) accumDfrDirect(run rfRunner, in DfrAccumLaunch, out DfrAccumOut) error {
	cells, err := checkDfrDirect(in)
	if err != nil {
		return err
	}
	if out.Grids == nil || out.Counters == nil {
		return fmt.Errorf("accel: AccumDfrDirect needs both outputs")
	}
	for _, e := range []error{needLen("DfrAccumOut.Grids", out.Grids, 7*cells), needLen("DfrAccumOut.Counters", out.Counters, 7)} {
		if e != nil {
			return e
		}
	}
	return b.launchDfrDirect(run, in, out, cells)
}

// checkDfrDirect checks an accum_dfr_direct launch (grid, sample counts,
// window and states) and returns the grid's cell count.
func checkDfrDirect(in DfrAccumLaunch) (int, error) {
	cells, err := checkGridShape(in.Grid)
	if err != nil {
		return 0, err
	}
	o := in.Options
	total := o.DirectSamples + o.KellerSamples + o.SuffixSamples
	if o.DirectSamples < 0 || o.KellerSamples < 0 || o.SuffixSamples < 0 || int64(total) > math.MaxInt32 {
		return 0, fmt.Errorf("accel: sample counts (%d, %d, %d) out of range", o.DirectSamples, o.KellerSamples, o.SuffixSamples)
	}
	if err := checkWindow(o.LaneOffset, o.LaneCount, total); err != nil {
		return 0, err
	}
	if in.NumStates < 0 {
		return 0, fmt.Errorf("accel: AccumDfrDirect needs states ≥ 0")
	}
	if in.NumStates > 0 && in.States == nil {
		return 0, fmt.Errorf("accel: AccumDfrDirect: States is required")
	}
	return cells, needLen("DfrAccumLaunch.States", in.States, in.NumStates*DfrStateWords)
}

// launchDfrDirect queues the launches of a checked accum_dfr_direct call.
func (b *BVH) launchDfrDirect(run rfRunner, in DfrAccumLaunch, out DfrAccumOut, cells int) error {
	if !in.Accumulate {
		for _, z := range []error{run.zero(out.Grids), run.zero(out.Counters)} {
			if z != nil {
				return z
			}
		}
	}
	calls, shared := b.dfrDirectCalls(in, cells)
	if len(calls) == 0 {
		return nil
	}
	return b.runAccum(run, calls, 2*cells, shared, out.Counters, out.Grids)
}

// rfCall is one grid-stride RF kernel launch over lanes: its entry (before
// the node layout's suffix) and its arguments before the outputs.
type rfCall struct {
	entry string
	lanes int
	args  []any
}

// dfrDirectKernels are accum_dfr_direct's kernels by lane kind: direct,
// Keller and suffix lanes.
var dfrDirectKernels = [3]string{"rf_accum_direct_only", "rf_accum_keller", "rf_accum_suffix"}

// dfrDirectCalls splits the window of in at D and D+K into windows of one
// lane kind each (lanes [0, D) are direct, [D, D+K) Keller, [D+K, D+K+X)
// suffix lanes), each run by its kind's kernel, which holds that kind's
// code only and so fewer registers than one kernel for all three; empty
// windows are left out. shared is the dynamic shared memory of each call.
func (b *BVH) dfrDirectCalls(in DfrAccumLaunch, cells int) (calls []rfCall, shared uint32) {
	o := in.Options
	lo, hi := int64(o.LaneOffset), int64(o.LaneOffset)+int64(o.LaneCount)
	bounds := [4]int64{0, int64(o.DirectSamples), int64(o.DirectSamples) + int64(o.KellerSamples), math.MaxInt64}
	for k, entry := range dfrDirectKernels {
		w := in
		from, to := max(lo, bounds[k]), min(hi, bounds[k+1])
		if from >= to {
			continue
		}
		w.Options.LaneOffset, w.Options.LaneCount = int(from), int(to-from)
		args, sh, ok := b.dfrDirectArgs(w, cells)
		if ok {
			calls, shared = append(calls, rfCall{entry: entry, lanes: int(to - from), args: args}), sh
		}
	}
	return calls, shared
}

// dfrDirectArgs are the arguments of rf_accum_direct before its
// accumulators and its dynamic shared memory; ok is false when the window
// runs no lane.
func (b *BVH) dfrDirectArgs(in DfrAccumLaunch, cells int) (args []any, shared uint32, ok bool) {
	o := in.Options
	if in.NumStates == 0 || o.LaneCount == 0 {
		return nil, 0, false
	}
	smem := 0
	if cells <= rfSmemDirectCells {
		smem = cells
	}
	args = []any{b.nodes, b.tris, int32(b.numTris), in.States, int32(in.NumStates)}
	args = append(args, gridParams(in.Grid)...)
	args = append(args, o.Wavelength, int32(o.DirectSamples), int32(o.KellerSamples), int32(o.SuffixSamples),
		uint32(o.Seed), int32(o.LaneOffset), int32(o.LaneCount), int32(smem))
	return args, uint32(smem * rfWarps * 2 * 8), true
}

// runAccum allocates the float64 accumulators, launches each call with its
// args + (acc, ints) and adds the accumulators to the float32 grids.
func (b *BVH) runAccum(run rfRunner, calls []rfCall, accLen int, shared uint32, ints *launch.Buffer[int32], grids *launch.Buffer[float32]) error {
	acc, err := run.allocF64(accLen)
	if err != nil {
		return err
	}
	defer run.free(acc)
	for _, c := range calls {
		module := ModuleRFAccum
		if c.entry == "rf_accum_reflections" {
			module = ModuleRFRefl
		}
		args := append(c.args[:len(c.args):len(c.args)], acc, ints)
		entry := b.entry(c.entry)
		grid, err := b.rfWaveGrid(run, module, entry, c.lanes, shared)
		if err != nil {
			return err
		}
		if err := run.launchShared(module, entry, grid, launch.Threads(TraceThreads), shared, args...); err != nil {
			return err
		}
	}
	return run.launchShared(ModuleRFAccum, "rf_add_f64_to_f32", launch.Blocks(min(accLen, 1<<20), TraceThreads),
		launch.Threads(TraceThreads), 0, acc, int64(accLen), grids)
}

// AccumDfrCoherentDirect queues accum_dfr_coherent_direct (spec §6.4) for
// the window of in (lane space S·cells) on s; inputs validated by package
// rf, buffer sizes checked here.
func (b *BVH) AccumDfrCoherentDirect(s *launch.Stream, in DfrCoherentLaunch, out DfrCoherentOut) error {
	return b.accumDfrCoherent(rfStream{s}, in, out)
}

func (b *BVH) accumDfrCoherent(run rfRunner, in DfrCoherentLaunch, out DfrCoherentOut) error {
	cells, err := checkDfrCoherent(in)
	if err != nil {
		return err
	}
	if out.Grids == nil || out.Counts == nil {
		return fmt.Errorf("accel: AccumDfrCoherentDirect needs States, Grids and Counts")
	}
	for _, e := range []error{needLen("DfrCoherentOut.Grids", out.Grids, 12*cells), needLen("DfrCoherentOut.Counts", out.Counts, 3*cells)} {
		if e != nil {
			return e
		}
	}
	return b.launchDfrCoherent(run, in, out, cells)
}

// checkDfrCoherent checks an accum_dfr_coherent_direct launch (grid, lane
// space, window and states) and returns the grid's cell count.
func checkDfrCoherent(in DfrCoherentLaunch) (int, error) {
	cells, err := checkGridShape(in.Grid)
	if err != nil {
		return 0, err
	}
	o := in.Options
	total := int64(in.NumStates) * int64(cells)
	if in.NumStates < 0 || total > math.MaxInt32 {
		return 0, fmt.Errorf("accel: coherent lane space %d×%d out of range", in.NumStates, cells)
	}
	if err := checkWindow(o.LaneOffset, o.LaneCount, int(total)); err != nil {
		return 0, err
	}
	if in.NumStates > 0 && in.States == nil {
		return 0, fmt.Errorf("accel: AccumDfrCoherentDirect needs States, Grids and Counts")
	}
	return cells, needLen("DfrCoherentLaunch.States", in.States, in.NumStates*DfrStateWords)
}

// launchDfrCoherent queues the launches of a checked coherent call.
func (b *BVH) launchDfrCoherent(run rfRunner, in DfrCoherentLaunch, out DfrCoherentOut, cells int) error {
	if !in.Accumulate {
		for _, z := range []error{run.zero(out.Grids), run.zero(out.Counts)} {
			if z != nil {
				return z
			}
		}
	}
	args, shared, ok := b.dfrCoherentArgs(in, cells)
	if !ok {
		return nil
	}
	return b.runAccum(run, []rfCall{{"rf_accum_coherent", in.Options.LaneCount, args}}, 2*cells, shared, out.Counts, out.Grids)
}

// dfrCoherentArgs are the arguments of rf_accum_coherent before its
// accumulators; ok is false when the window runs no lane.
func (b *BVH) dfrCoherentArgs(in DfrCoherentLaunch, cells int) (args []any, shared uint32, ok bool) {
	o := in.Options
	if o.LaneCount == 0 {
		return nil, 0, false
	}
	smem := 0
	if cells <= rfSmemCoherentCells {
		smem = cells
	}
	args = []any{b.nodes, b.tris, int32(b.numTris), in.States, int32(in.NumStates)}
	args = append(args, gridParams(in.Grid)...)
	args = append(args, o.Wavelength, boolArg(o.SelectDiffractionPoint), boolArg(o.PrefilterVisibility),
		int32(o.LaneOffset), int32(o.LaneCount), int32(smem))
	return args, uint32(smem * rfWarps * (2*8 + 3*4)), true
}

func boolArg(v bool) int32 {
	if v {
		return 1
	}
	return 0
}
