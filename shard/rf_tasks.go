package shard

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/rf"
)

// The dispatch modes of accumulate_reflections (Layer.LastDispatch): its
// row windows are warp-aligned like lane windows but named after RayD's
// batch executor.
const (
	// ModeBatchSharded runs one launch per weighted ray-row window.
	ModeBatchSharded Mode = "batch-sharded"
	// ModeBatchChunked cuts the ray-row windows into chunks (ChunkRays or
	// MemoryBudgetBytes).
	ModeBatchChunked Mode = "batch-chunked"
)

// ClassSourceLane is the DispatchRecord.Class of trace_dfr_paths.
const ClassSourceLane = "source_lane"

// Byte model of the RF operations (spec §3.3).
const (
	// dfrLaneBytes is the budget cost of one accum_dfr_direct lane (tape
	// 1+4+4+4+4 bytes and one visibility byte).
	dfrLaneBytes = 21
	// coherentLaneBytes is one coherent lane of the staged route: an int32
	// key and eight float32.
	coherentLaneBytes = 36
	// reflRowBytes is one accumulate_reflections ray: 53 input bytes and a
	// 48-byte SoA split.
	reflRowBytes = 101
	// reflStagedBytes is one (ray, depth) sample of the staged reflection
	// route: a cell index and eight float32.
	reflStagedBytes = 36
	// pathRowBytes is one exported path row: valid, six int32 ids, delay,
	// six field components and three points.
	pathRowBytes = 1 + 6*4 + 4 + 6*4 + 9*4
)

// Defaults of RayD's automatic reflection accumulation strategy.
const (
	reflStagedMinSamples        = 2048
	reflStagedMinSamplesPerCell = 4
	reflStrategyAtomic          = 1
	reflStrategyStaged          = 2
)

// ErrIncompatiblePartials matches every *MergeError.
var ErrIncompatiblePartials = errors.New("shard: grid partials cannot be merged")

// MergeError refuses to sum two grid partials (spec §7.2): bounded
// wedge-event buffers, or partials of different grids or bounce counts.
type MergeError struct {
	Operation string
	Reason    string
}

// Error implements error.
func (e *MergeError) Error() string { return "shard: " + e.Operation + ": " + e.Reason }

// Is reports whether target is ErrIncompatiblePartials.
func (e *MergeError) Is(target error) bool { return target == ErrIncompatiblePartials }

// RefusalError is an RF request the multi-device layer has no semantics for
// (RayD's NotImplementedError): it is refused before any launch and leaves
// the layer usable. It matches ErrUnsupported.
type RefusalError struct {
	Operation string
	Reason    string
}

// Error implements error.
func (e *RefusalError) Error() string { return "shard: " + e.Operation + ": " + e.Reason }

// Is reports whether target is ErrUnsupported.
func (e *RefusalError) Is(target error) bool { return target == ErrUnsupported }

// facesOnly is an rf.Scene of n faces that is never traced: package rf's
// operations called with it and an empty workload only validate.
type facesOnly int

func (n facesOnly) NumFaces() int                                         { return int(n) }
func (facesOnly) Triangle(int) (p0, p1, p2 [3]float32)                    { return }
func (facesOnly) AnyHit(_, _ [3]float32, _, _ float32) bool               { return false }
func (facesOnly) ClosestHit(_, _ [3]float32, _, _ float32) (rf.Hit, bool) { return rf.Hit{}, false }

// RequireDfrInputs is the check that a DFR accumulation has its
// states and its grid (spec §13 row 69).
func RequireDfrInputs(op string, st *rf.DfrStates, g rf.DfrGrid) error {
	switch {
	case st == nil:
		return &rf.ValidationError{Op: op, Field: "states", Kind: rf.ErrInvalidArgument,
			Reason: op + " requires RayD-style DfrStates and a DfrGrid (states are nil)"}
	case g == rf.DfrGrid{}:
		return &rf.ValidationError{Op: op, Field: "grid", Kind: rf.ErrInvalidArgument,
			Reason: op + " requires RayD-style DfrStates and a DfrGrid (the grid is the zero value)"}
	}
	return nil
}

// window resolves a caller window with package rf's rule and messages.
func window(op string, offset, count, total int) error {
	_, err := rf.ResolveWindow(offset, count, total)
	var ve *rf.ValidationError
	if errors.As(err, &ve) {
		ve.Op = op
	}
	return err
}

// statesBytes is the size of every state slice (RayD's replicated state
// tensors).
func statesBytes(st *rf.DfrStates) int64 {
	if st == nil {
		return 0
	}
	n := len(st.EdgeIndex) + len(st.EdgePos) + len(st.EdgeDir) + len(st.EdgeTMin) + len(st.EdgeTMax) +
		len(st.N0) + len(st.N1) + len(st.Prim0) + len(st.Prim1) + len(st.ExteriorAngle) + len(st.Src) +
		len(st.SrcPower) + len(st.Wi) + len(st.D0)
	return 4 * int64(n)
}

// materialBytes is the size of a material table (four float32 and one bool
// per face); the default material counts faces rows.
func materialBytes(m *rf.DfrMaterial, faces int) int64 {
	if m == nil {
		return 17 * int64(max(faces, 0))
	}
	return 4*int64(len(m.EtaR)+len(m.Sigma)+len(m.MuR)+len(m.Gain)) + int64(len(m.Valid))
}

func cellsOf(res0, res1 int) int64 { return int64(max(res0, 0)) * int64(max(res1, 0)) }

// AccumDfrDirect is the grid_reduce task of accum_dfr_direct (spec §7.1) on
// host inputs. The layer shards the caller's window of the D+K+X lane space
// into warp-aligned windows; every launch receives the caller's global sample
// counts and seed with its own window (Window), so the partials sum to the
// single launch: counters exactly, grids up to float32 summation order.
type AccumDfrDirect struct {
	// Faces is the scene's global face count (it sizes the default
	// material).
	Faces int
	// States, Grid, Material and Active are the operation's inputs (package
	// rf's types and rules; Material nil is the default material).
	States   *rf.DfrStates
	Grid     rf.DfrGrid
	Material *rf.DfrMaterial
	Active   []bool
	// Options are the scalar arguments; LaneOffset and LaneCount are the
	// caller's window.
	Options rf.AccumOptions

	replicated int64 // replicated input bytes charged to a budget
	key        uint64
	keyed      bool // key holds InputKey
}

// Op is the byte model of accum_dfr_direct: 21 bytes per lane, warp-aligned
// chunks, and with a budget three grid payloads (seven float32 grids and
// seven int32 counters) plus the replicated inputs of a sharded call.
func (t *AccumDfrDirect) Op() Op {
	g := cellsOf(t.Grid.Res0, t.Grid.Res1)*7*4 + 7*4
	return Op{Key: OpAccumDfrDirect, Class: GridReduce, RowBytes: dfrLaneBytes, FixedBytes: 3*g + t.replicated,
		WarpChunks: true}
}

// Lanes validates the inputs with package rf's rules and messages (every
// failure is an *rf.ValidationError, the caller's window included) and
// returns the lane space D+K+X and the caller's window.
func (t *AccumDfrDirect) Lanes() (total, offset, count int, err error) {
	const op = OpAccumDfrDirect
	if err := RequireDfrInputs(op, t.States, t.Grid); err != nil {
		return 0, 0, 0, err
	}
	o := t.Options
	o.LaneOffset, o.LaneCount, o.Seed = 0, 0, 0
	if _, err := rf.AccumDfrDirect(facesOnly(t.Faces), t.States, t.Grid, t.Material, t.Active, o); err != nil {
		return 0, 0, 0, err
	}
	total = o.DirectSamples + o.KellerSamples + o.SuffixSamples
	if err := window(op, t.Options.LaneOffset, t.Options.LaneCount, total); err != nil {
		return 0, 0, 0, err
	}
	o.Seed = t.Options.Seed
	if _, err := rf.AccumDfrDirect(facesOnly(t.Faces), t.States, t.Grid, t.Material, t.Active, o); err != nil {
		return 0, 0, 0, err
	}
	return total, t.Options.LaneOffset, t.Options.LaneCount, nil
}

// Window returns the options of the launch of global lanes [lo, hi).
func (t *AccumDfrDirect) Window(lo, hi int) rf.AccumOptions {
	o := t.Options
	o.LaneOffset, o.LaneCount = lo, hi-lo
	return o
}

// InputBytes is the size of the inputs every device receives whole: the
// states, the material and the active mask.
func (t *AccumDfrDirect) InputBytes() int64 {
	return statesBytes(t.States) + materialBytes(t.Material, t.Faces) + int64(len(t.Active))
}

// AccumDfrCoherentDirect is the grid_reduce task of
// accum_dfr_coherent_direct (spec §7.1) on host inputs: the caller's window
// of the S·C lane space (lane g: state g mod S, cell g div S) sharded into
// warp-aligned windows.
type AccumDfrCoherentDirect struct {
	// Faces is the scene's global face count.
	Faces int
	// States, Grid, Material and Active are the operation's inputs.
	States   *rf.DfrStates
	Grid     rf.DfrGrid
	Material *rf.DfrMaterial
	Active   []bool
	// Options are the scalar arguments; LaneOffset and LaneCount are the
	// caller's window.
	Options rf.CoherentOptions

	replicated int64
	key        uint64
	keyed      bool // key holds InputKey
}

// Op is the byte model of accum_dfr_coherent_direct: 36 bytes per lane
// (the staged route, always charged), warp-aligned chunks, and with a budget
// three payloads of sixteen per-cell values plus the replicated inputs.
func (t *AccumDfrCoherentDirect) Op() Op {
	g := cellsOf(t.Grid.Res0, t.Grid.Res1) * 16 * 4
	return Op{Key: OpAccumDfrCoherentDirect, Class: GridReduce, RowBytes: coherentLaneBytes,
		FixedBytes: 3*g + t.replicated, WarpChunks: true}
}

// Lanes validates the inputs with package rf's rules and returns the lane
// space S·C and the caller's window.
func (t *AccumDfrCoherentDirect) Lanes() (total, offset, count int, err error) {
	const op = OpAccumDfrCoherentDirect
	if err := RequireDfrInputs(op, t.States, t.Grid); err != nil {
		return 0, 0, 0, err
	}
	o := t.Options
	o.LaneOffset, o.LaneCount = 0, 0
	if _, err := rf.AccumDfrCoherentDirect(facesOnly(t.Faces), t.States, t.Grid, t.Material, t.Active, o); err != nil {
		return 0, 0, 0, err
	}
	total = t.States.StateCount() * t.Grid.Cells()
	if err := window(op, t.Options.LaneOffset, t.Options.LaneCount, total); err != nil {
		return 0, 0, 0, err
	}
	return total, t.Options.LaneOffset, t.Options.LaneCount, nil
}

// Window returns the options of the launch of global lanes [lo, hi).
func (t *AccumDfrCoherentDirect) Window(lo, hi int) rf.CoherentOptions {
	o := t.Options
	o.LaneOffset, o.LaneCount = lo, hi-lo
	return o
}

// InputBytes is the size of the inputs every device receives whole.
func (t *AccumDfrCoherentDirect) InputBytes() int64 {
	return statesBytes(t.States) + materialBytes(t.Material, t.Faces) + int64(len(t.Active))
}

// AccumulateReflections is the grid_reduce task of accumulate_reflections
// (spec §7.2) on a host ray batch: warp-aligned windows of ray rows, each
// launched on its rows (Rows), every device holding the whole material.
// With Options.CollectWedges the call is one launch on the master.
type AccumulateReflections struct {
	// Faces is the scene's global face count (the material has one row
	// per face).
	Faces int
	// Rays, Grid, Material, MaxBounces and Options are the operation's
	// inputs (package rf's types and rules).
	Rays       rf.ReflRays
	Grid       rf.AccumGrid
	Material   *rf.ReflMaterial
	MaxBounces int
	Options    rf.ReflOptions

	staged bool // the pinned strategy is the staged route
	remote bool // a remote device runs a window
	key    uint64
	keyed  bool // key holds MaterialKey
}

// reflGridBytes is the payload of one partial: seven float32 grids and the
// two counters.
func (t *AccumulateReflections) reflGridBytes() int64 {
	return cellsOf(t.Grid.Res0, t.Grid.Res1)*7*4 + 8
}

// Op is the byte model of accumulate_reflections: 101 bytes per ray (plus
// 36 per ray and depth on the staged route), no warp rounding of chunks, a
// remote floor raised by the grid it returns (ceil(Gr/100) rows), and with a
// budget the larger of the master's merge peak and one remote's partial
// pair plus its material.
func (t *AccumulateReflections) Op() Op {
	gr := t.reflGridBytes()
	row := reflRowBytes
	if t.staged {
		row += reflStagedBytes * max(t.MaxBounces+1, 1)
	}
	fixed := 2 * gr
	if t.remote {
		fixed = max(3*gr, 2*gr+materialBytes(t.Material, t.Faces))
	}
	return Op{Key: OpAccumulateReflections, Class: GridReduce, RowBytes: row, FixedBytes: fixed,
		LaneFloorExtra: int((gr + FloorBaselineBytes - 1) / FloorBaselineBytes)}
}

// Lanes validates the batch and returns its rows as the lane space, all of
// them the window.
func (t *AccumulateReflections) Lanes() (total, offset, count int, err error) {
	n, err := t.Rows()
	return n, 0, n, err
}

// Rows validates the batch and returns its row count N: the per-row inputs
// must have N rows (tx_position, and tx_polarization and active unless
// empty; spec §13 row 46), then package rf's rules.
func (t *AccumulateReflections) Rows() (int, error) {
	const op = OpAccumulateReflections
	r := t.Rays
	if len(r.O)%3 == 0 {
		n := len(r.O) / 3
		for _, c := range []struct {
			name     string
			got, per int
			opt      bool
		}{{"tx_position", len(r.TxPosition), 3, false}, {"tx_polarization", len(r.TxPolarization), 3, true},
			{"active", len(r.Active), 1, true}} {
			if c.got == n*c.per || (c.opt && c.got == 0) {
				continue
			}
			what := "its first dimension is the batch axis"
			if c.opt {
				what = "it is empty or " + what
			}
			return 0, &rf.ValidationError{Op: op, Field: c.name, Kind: rf.ErrLength,
				Reason: fmt.Sprintf("Scene(devices=...) can only shard %s when %s; expected %d rows, got %d values",
					c.name, what, n, c.got)}
		}
	}
	v := r
	if n := len(v.O) / 3; len(v.Active) == 0 || len(v.Active) == n {
		v.Active = make([]bool, n) // every row inactive: validation only
	}
	o := t.Options
	o.CollectWedges = false
	if _, err := rf.AccumulateReflections(facesOnly(t.Faces), v, t.Grid, t.Material, t.MaxBounces, o); err != nil {
		return 0, err
	}
	return len(r.O) / 3, nil
}

// Window returns rows [lo, hi) of the batch (views of the caller's slices).
func (t *AccumulateReflections) Window(lo, hi int) rf.ReflRays {
	r := t.Rays
	return rf.ReflRays{O: r.O[3*lo : 3*hi], D: r.D[3*lo : 3*hi], TMax: rows1(r.TMax, lo, hi),
		TxPosition: r.TxPosition[3*lo : 3*hi], TxPolarization: rows3(r.TxPolarization, lo, hi),
		Active: rows1(r.Active, lo, hi)}
}

// rows3 slices an optional three-per-row input (empty stays empty).
func rows3[T any](v []T, lo, hi int) []T {
	if len(v) == 0 {
		return v
	}
	return v[3*lo : 3*hi]
}

// PinReflectionStrategy is the accumulation strategy every window of a
// sharded accumulate_reflections call runs with (spec §7.2 step 6): an
// explicit strategy as given; the automatic one (0) as the unsplit batch of
// rows rays would choose it: staged (2) when its rows·(B+1) samples fit in
// int32, reach CompactMinSamples (default 2048) and reach
// StagedMinSamplesPerCell (default 4) per cell, atomic (1) otherwise.
func PinReflectionStrategy(rows, maxBounces, cells int, o rf.ReflOptions) int {
	if o.AccumulationStrategy != 0 {
		return o.AccumulationStrategy
	}
	samples := int64(rows) * int64(max(maxBounces+1, 1))
	minSamples, perCell := int64(reflStagedMinSamples), int64(reflStagedMinSamplesPerCell)
	if o.CompactMinSamples > 0 {
		minSamples = int64(o.CompactMinSamples)
	}
	if o.StagedMinSamplesPerCell > 0 {
		perCell = int64(o.StagedMinSamplesPerCell)
	}
	if samples <= 1<<31-1 && samples >= minSamples && samples >= int64(cells)*perCell {
		return reflStrategyStaged
	}
	return reflStrategyAtomic
}

// TraceDfrPaths is the source_lane task of trace_dfr_paths (spec §7.3) on
// host inputs: the transmitters are cut into whole blocks, each device runs
// every receiver and state of its block with the SourceLane layout, and the
// blocks' rows are concatenated at their global positions
// ((tx·R + rx)·M + s) with valid transmitter ids offset by the block start.
type TraceDfrPaths struct {
	// Faces is the scene's global face count.
	Faces int
	// Tx and Rx hold 3 float32 per transmitter and receiver.
	Tx, Rx []float32
	// States, Material and Active are the operation's inputs (Active is
	// required: one flag per state of the limit M = min(S, MaxPaths)).
	States   *rf.DfrStates
	Material *rf.DfrMaterial
	Active   []bool
	// Options must select rf.SourceLane.
	Options rf.PathOptions
}

// Op is the key of trace_dfr_paths; the layer plans it over transmitter
// rows, whose row is R·M path rows.
func (t *TraceDfrPaths) Op() Op {
	row := t.LanesPerTx() * pathRowBytes
	return Op{Key: OpTraceDfrPaths, Class: PerRay, RowBytes: row, TransferRowBytes: row}
}

// StateLimit is M = min(S, MaxPaths) (S when MaxPaths is 0).
func (t *TraceDfrPaths) StateLimit() int {
	if t.States == nil {
		return 0
	}
	m := t.States.StateCount()
	if t.Options.MaxPaths != 0 {
		m = min(m, t.Options.MaxPaths)
	}
	return m
}

// LanesPerTx is R·M, the path rows of one transmitter.
func (t *TraceDfrPaths) LanesPerTx() int { return len(t.Rx) / 3 * max(t.StateLimit(), 0) }

// Rows validates the call and returns the transmitter count: the layout must
// be rf.SourceLane (spec §13 row 52), then package rf's rules (state limit,
// active, material, polarization) and the int32 capacity T·R·M.
func (t *TraceDfrPaths) Rows() (int, error) {
	const op = OpTraceDfrPaths
	if t.Options.Layout != rf.SourceLane {
		return 0, &rf.ValidationError{Op: op, Field: "layout", Kind: rf.ErrInvalidArgument,
			Reason: fmt.Sprintf("Scene(devices=...) requires DfrPathLayout.SourceLane (got layout %d): "+
				"Compact rows have no stable global position across devices", t.Options.Layout)}
	}
	if len(t.Tx)%3 != 0 {
		return 0, &rf.ValidationError{Op: op, Field: "tx_positions", Kind: rf.ErrLength,
			Reason: fmt.Sprintf("length %d is not a multiple of 3", len(t.Tx))}
	}
	o := t.Options
	o.TxPolarization = nil
	if _, err := rf.TraceDfrPaths(facesOnly(t.Faces), nil, t.Rx, t.States, t.Material, t.Active, o); err != nil {
		return 0, err
	}
	if np := len(t.Options.TxPolarization); np%3 != 0 || (np != 0 && np != 3 && np != len(t.Tx)) {
		return 0, &rf.ValidationError{Op: op, Field: "tx_polarization", Kind: rf.ErrLength,
			Reason: fmt.Sprintf("tx_pol width must be 1 or match tx_pos. (%d values, %d transmitters)", np, len(t.Tx)/3)}
	}
	if c := int64(len(t.Tx)/3) * int64(len(t.Rx)/3) * int64(len(t.Active)); c > 1<<31-1 {
		return 0, &rf.ValidationError{Op: op, Field: "capacity", Kind: rf.ErrCapacity,
			Reason: fmt.Sprintf("capacity does not fit in int32. (%d)", c)}
	}
	return len(t.Tx) / 3, nil
}

// Slice returns the call restricted to transmitters [lo, hi): their
// positions and, when it has one row per transmitter, their polarization
// (views of the caller's slices; everything else is shared whole).
func (t *TraceDfrPaths) Slice(lo, hi int) *TraceDfrPaths {
	c := *t
	c.Tx = t.Tx[3*lo : 3*hi]
	if np := len(t.Options.TxPolarization); np > 0 && np == len(t.Tx) {
		c.Options.TxPolarization = t.Options.TxPolarization[3*lo : 3*hi]
	}
	return &c
}

// Assemble concatenates the transmitter blocks in row order (spec §7.3):
// every field is placed at the block's global rows, valid rows get the
// block start added to their transmitter id, counts add.
func (t *TraceDfrPaths) Assemble(total int, parts []Part[*rf.DfrPaths]) (*rf.DfrPaths, error) {
	per := t.LanesPerTx()
	out := rf.NewDfrPaths(0, rf.SourceLane)
	next := 0
	for _, p := range parts {
		switch {
		case p.Start != next:
			return nil, fmt.Errorf("shard: %s: block [%d,%d) does not follow transmitter %d", OpTraceDfrPaths, p.Start, p.Stop, next)
		case p.Record == nil || p.Record.Capacity != (p.Stop-p.Start)*per:
			return nil, fmt.Errorf("shard: %s: block [%d,%d) does not hold %d rows", OpTraceDfrPaths, p.Start, p.Stop, (p.Stop-p.Start)*per)
		}
		if err := out.AppendShard(p.Record, p.Start); err != nil {
			return nil, err
		}
		next = p.Stop
	}
	if next != total {
		return nil, fmt.Errorf("shard: %s: blocks cover %d of %d transmitters", OpTraceDfrPaths, next, total)
	}
	return out, nil
}

// RecordRowBytes is the size of one transmitter's path rows.
func (t *TraceDfrPaths) RecordRowBytes(*rf.DfrPaths) int { return t.LanesPerTx() * pathRowBytes }

// MergeAccum adds the accum_dfr_direct partial part into acc (the
// grid_reduce merge: grids and counters add). Partials of different grids
// are a *MergeError.
func MergeAccum(acc, part *rf.AccumResult) error {
	if acc == nil || part == nil || acc.Res0 != part.Res0 || acc.Res1 != part.Res1 ||
		!sameLen(int(cellsOf(acc.Res0, acc.Res1)), acc.Power, acc.FieldXRe, acc.FieldXIm, acc.FieldYRe, acc.FieldYIm,
			acc.FieldZRe, acc.FieldZIm, part.Power, part.FieldXRe, part.FieldXIm, part.FieldYRe, part.FieldYIm,
			part.FieldZRe, part.FieldZIm) {
		return &MergeError{Operation: OpAccumDfrDirect, Reason: "incompatible result metadata: the partials have different grids"}
	}
	return acc.Add(part)
}

// MergeCoherent adds the accum_dfr_coherent_direct partial part into acc.
func MergeCoherent(acc, part *rf.CoherentResult) error {
	if acc == nil || part == nil || acc.Res0 != part.Res0 || acc.Res1 != part.Res1 {
		return &MergeError{Operation: OpAccumDfrCoherentDirect, Reason: "incompatible result metadata: the partials have different grids"}
	}
	c := int(cellsOf(acc.Res0, acc.Res1))
	for _, r := range []*rf.CoherentResult{acc, part} {
		if !sameLen(c, r.DirectFieldXRe, r.DirectFieldXIm, r.DirectFieldYRe, r.DirectFieldYIm, r.DirectFieldZRe,
			r.DirectFieldZIm, r.MultiFieldXRe, r.MultiFieldXIm, r.MultiFieldYRe, r.MultiFieldYIm, r.MultiFieldZRe,
			r.MultiFieldZIm) || !sameLen(c, r.DirectCount, r.MultiCount, r.VisibilityRejectCount, r.UtdRejectCount) {
			return &MergeError{Operation: OpAccumDfrCoherentDirect, Reason: "incompatible result metadata: a partial does not cover its grid"}
		}
	}
	return acc.Add(part)
}

// MergeReflections adds the accumulate_reflections partial part into acc
// (spec §7.2): grids, reflection counts, ray counts and wedge counts add.
// Different bounce counts or grids («incompatible result metadata») and
// bounded wedge-event buffers («cannot merge bounded wedge-event buffers»)
// are *MergeError values.
func MergeReflections(acc, part *rf.ReflResult) error {
	const op = OpAccumulateReflections
	if acc == nil || part == nil || acc.MaxBounces != part.MaxBounces || acc.Res0 != part.Res0 || acc.Res1 != part.Res1 ||
		!sameLen(int(cellsOf(acc.Res0, acc.Res1)), acc.Power, acc.FieldXRe, acc.FieldXIm, acc.FieldYRe, acc.FieldYIm,
			acc.FieldZRe, acc.FieldZIm, part.Power, part.FieldXRe, part.FieldXIm, part.FieldYRe, part.FieldYIm,
			part.FieldZRe, part.FieldZIm) {
		return &MergeError{Operation: op, Reason: "reflection accumulation partials have incompatible result metadata"}
	}
	if acc.Wedges.Capacity != 0 || part.Wedges.Capacity != 0 {
		return &MergeError{Operation: op, Reason: "sharded reflection accumulation cannot merge bounded wedge-event buffers"}
	}
	return acc.Add(part)
}

func sameLen[T any](n int, vs ...[]T) bool {
	for _, v := range vs {
		if len(v) != n {
			return false
		}
	}
	return true
}
