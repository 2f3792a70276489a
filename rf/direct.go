package rf

import (
	"fmt"
	"math"
)

// AccumOptions are the scalar arguments of accum_dfr_direct (spec §6.2).
// The zero value is not usable (Wavelength must be positive); start from
// DefaultAccumOptions.
type AccumOptions struct {
	// Wavelength λ > 0 (k = 2π/λ).
	Wavelength float64
	// DirectSamples, KellerSamples and SuffixSamples are the sample counts
	// D, K, X of the global lane space [0, D+K+X) (each ≥ 0, sum ≤ 2³¹−1).
	DirectSamples, KellerSamples, SuffixSamples int
	// Seed keys every random draw; it must lie in [0, 2³¹−1].
	Seed int64
	// LaneOffset and LaneCount select the window of global lanes
	// [LaneOffset, LaneOffset+LaneCount) this call runs; LaneCount < 0 runs
	// every lane from LaneOffset on. Disjoint windows partition the full
	// launch: their results, merged with Add, equal the single call.
	LaneOffset, LaneCount int
}

// DefaultAccumOptions returns RayD's defaults: λ = 1, no samples, seed 0,
// the whole lane space.
func DefaultAccumOptions() AccumOptions {
	return AccumOptions{Wavelength: 1, LaneCount: -1}
}

// AccumResult is DfrAccum (spec §6.2): seven float grids of Res1 × Res0
// cells (row-major, cell c = j·Res0 + i) and seven counters. Power sums the
// per-lane power c, FieldXRe the incoherent amplitude √c; the other field
// grids stay zero in this operation, as EdgeVisRejects does.
type AccumResult struct {
	Res0, Res1         int       // grid resolution
	Power              []float64 // Σ c per cell
	FieldXRe, FieldXIm []float64 // Σ √c per cell (x real); the rest stay zero
	FieldYRe, FieldYIm []float64
	FieldZRe, FieldZIm []float64
	// DirectCount, KellerCount and SuffixCount count the committed lanes of
	// each kind; EdgeUses counts every committed lane.
	DirectCount, KellerCount, SuffixCount, EdgeUses int32
	// VisRejects counts lanes rejected by visibility (inactive states
	// included), UtdRejects lanes whose sampling or weight failed;
	// EdgeVisRejects belongs to the chain variant and stays zero.
	VisRejects, UtdRejects, EdgeVisRejects int32
}

func newAccumResult(res0, res1 int) *AccumResult {
	c := res0 * res1
	return &AccumResult{Res0: res0, Res1: res1,
		Power: make([]float64, c), FieldXRe: make([]float64, c), FieldXIm: make([]float64, c),
		FieldYRe: make([]float64, c), FieldYIm: make([]float64, c), FieldZRe: make([]float64, c), FieldZIm: make([]float64, c)}
}

func (r *AccumResult) grids() [][]float64 {
	return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
}

func (r *AccumResult) counters() []*int32 {
	return []*int32{&r.DirectCount, &r.KellerCount, &r.SuffixCount, &r.VisRejects, &r.EdgeVisRejects, &r.UtdRejects, &r.EdgeUses}
}

// Add merges o into r (the grid_reduce merge: grids and counters add). The
// shapes must match.
func (r *AccumResult) Add(o *AccumResult) error {
	if r.Res0 != o.Res0 || r.Res1 != o.Res1 {
		return fmt.Errorf("rf: cannot merge %dx%d accumulation into %dx%d", o.Res1, o.Res0, r.Res1, r.Res0)
	}
	og := o.grids()
	for k, g := range r.grids() {
		for i := range g {
			g[i] += og[k][i]
		}
	}
	oc := o.counters()
	for k, c := range r.counters() {
		*c += *oc[k]
	}
	return nil
}

// directCall is a validated accum_dfr_direct call.
type directCall struct {
	tr      tracer
	states  []state
	grid    gridView
	mat     matView
	active  []bool
	lambda  float64
	D, K, X int
	seed    uint32
	lo, hi  int // window [lo, hi)
}

func (c *directCall) total() int { return c.D + c.K + c.X }

// newDirectCall validates the inputs of accum_dfr_direct in RayD's order
// (validateDirect) and widens the states.
func newDirectCall(op string, sc Scene, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, o AccumOptions) (*directCall, error) {
	tr := tracer{sc}
	v, err := validateDirect(op, tr.faces(), st, g, m, active, o)
	if err != nil {
		return nil, err
	}
	return &directCall{tr: tr, states: widenStates(st, v.states), grid: v.grid, mat: v.mat, active: active,
		lambda: o.Wavelength, D: o.DirectSamples, K: o.KellerSamples, X: o.SuffixSamples, seed: uint32(o.Seed),
		lo: o.LaneOffset, hi: o.LaneOffset + v.lanes}, nil
}

// validated is what the validation of a grid operation found: the grid, the
// material, the state count and the lanes of the window.
type validated struct {
	grid   gridView
	mat    matView
	states int
	lanes  int
}

// validateDirect checks the inputs of accum_dfr_direct in RayD's order,
// then the size of the result grids, without allocating.
func validateDirect(op string, faces int, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, o AccumOptions) (validated, error) {
	var v validated
	if st != nil && st.Count < 0 {
		return v, newErr(op, "states.count", ErrStateCount, "state_limit must be non-negative.")
	}
	var err error
	if v.grid, err = checkGrid(op, g); err != nil {
		return v, err
	}
	if err := checkWavelength(op, o.Wavelength); err != nil {
		return v, err
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"direct_samples", o.DirectSamples}, {"keller_samples", o.KellerSamples}, {"suffix_samples", o.SuffixSamples}} {
		if c.v < 0 {
			return v, newErr(op, c.name, ErrInvalidArgument, "%s must be non-negative. (got %d)", c.name, c.v)
		}
		if err := checkInt32(op, c.name, int64(c.v)); err != nil {
			return v, err
		}
	}
	if v.states, err = checkStateTable(op, st); err != nil {
		return v, err
	}
	if err := checkActive(op, active, v.states); err != nil {
		return v, err
	}
	if v.mat, err = checkMaterial(op, m, faces, -1); err != nil {
		return v, err
	}
	total := int64(o.DirectSamples) + int64(o.KellerSamples) + int64(o.SuffixSamples)
	if err := checkInt32(op, "total_samples", total); err != nil {
		return v, err
	}
	if v.lanes, err = resolveWindow(op, o.LaneOffset, o.LaneCount, int(total)); err != nil {
		return v, err
	}
	if o.Seed < 0 || o.Seed > math.MaxInt32 {
		return v, newErr(op, "seed", ErrInvalidArgument, "seed does not fit in int32. (got %d)", o.Seed)
	}
	return v, checkResult(op, "grids", v.grid.cells, AccumCellBytes)
}

// ValidateAccumDfrDirect checks the arguments of AccumDfrDirect on a scene
// of faces faces exactly as AccumDfrDirect does (same rules, same order,
// same errors), including the size of the result grids against
// geom.HostMemoryLimit(), without tracing or allocating anything. It
// returns the number of lanes of the window. Device implementations run it
// before they allocate.
func ValidateAccumDfrDirect(faces int, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, opt AccumOptions) (lanes int, err error) {
	v, err := validateDirect("accum_dfr_direct", faces, st, g, m, active, opt)
	return v.lanes, err
}

// AccumDfrDirect is accum_dfr_direct (spec §6.2): the order-1 Monte-Carlo
// diffraction accumulation over the lane window of opt, as a float64
// reference of the device kernels. sc may be nil (empty space); m nil is the
// default material; active is empty (all states), one broadcast flag, or one
// flag per state.
//
// Per global lane g (state s = g mod S, cell (g div S) mod C, see DirectLane),
// in the order of RayD's launch passes:
//
//	A  flag = active(s) && vis(src, Q)        Q = edge_pos + t_e·ê, t_e = t_min + U(g,0,seed)·(t_max−t_min)
//	B  direct/Keller lanes: flag == 0 ⇒ vis_rejects++ (inactive states included)
//	   T = centre(cell); Keller: T, cell, m from the cone sample, failure ⇒ utd_rejects++
//	   !vis(Q, T) ⇒ vis_rejects++
//	C  suffix lanes: flag == 0 ⇒ vis_rejects++; no specular connection R ⇒ utd_rejects++;
//	   !visIgnoring(Q, R) ⇒ vis_rejects++
//	D  suffix lanes: !visIgnoring(R, T) ⇒ vis_rejects++
//	   c = W(s, Q, T|R, len·S/n_kind)·(m | gain²·(λ/4π)²/max(|T−R|²,1e-6)·count)
//	   !(c > 0) or non-finite ⇒ utd_rejects++
//	   else power[cell] += c, field_x_re[cell] += √c, kind count++, edge_uses++
//
// Lanes are summed in ascending global order, so a partition of the lane
// space into windows reproduces the single call exactly in its counters and
// up to float64 summation order in its grids.
func AccumDfrDirect(sc Scene, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, opt AccumOptions) (*AccumResult, error) {
	c, err := newDirectCall("accum_dfr_direct", sc, st, g, m, active, opt)
	if err != nil {
		return nil, err
	}
	r := newAccumResult(c.grid.res0, c.grid.res1)
	if len(c.states) == 0 {
		return r, nil
	}
	for g := c.lo; g < c.hi; g++ {
		ln := c.lane(uint32(g))
		switch ln.outcome {
		case outVisReject:
			r.VisRejects++
		case outUtdReject:
			r.UtdRejects++
		case outCommit:
			r.Power[ln.cell] += ln.c
			r.FieldXRe[ln.cell] += math.Sqrt(ln.c)
			switch ln.kind {
			case LaneDirect:
				r.DirectCount++
			case LaneKeller:
				r.KellerCount++
			default:
				r.SuffixCount++
			}
			r.EdgeUses++
		}
	}
	return r, nil
}

// Lane outcomes.
const (
	outSkip = iota
	outVisReject
	outUtdReject
	outCommit
)

// laneResult is the fate of one lane, with the frozen choices the VJP
// replays.
type laneResult struct {
	outcome int
	kind    LaneKind
	s, cell int
	u       float64 // edge parameter draw
	phi     float64 // Keller cone angle
	face    int32   // suffix face
	count   float64 // suffix candidate count
	c       float64 // contribution
}

// lane runs global lane g through passes A–D.
func (c *directCall) lane(g uint32) laneResult {
	S := len(c.states)
	s, cell := DirectLane(g, S, c.grid.cells)
	kind := KindOf(g, c.D, c.K)
	ln := laneResult{kind: kind, s: s, cell: cell, face: -1, count: 1}
	st := &c.states[s]
	// Pass A: source visibility (inactive states leave the flag at 0).
	if !isActive(c.active, s) {
		ln.outcome = outVisReject
		return ln
	}
	ln.u = float64(Uniform(g, StreamEdge, c.seed))
	e := st.dir.normalize()
	q := st.pos.add(e.scale(st.tmin + ln.u*(st.tmax-st.tmin)))
	if !c.tr.visible(st.src, q) {
		ln.outcome = outVisReject
		return ln
	}
	t := c.grid.center(cell)
	n := c.D
	measure := 1.0
	switch kind {
	case LaneKeller:
		n = c.K
		ln.phi = 2 * math.Pi * float64(Uniform(g, StreamKeller, c.seed))
		kt, kc, km, ok := kellerHit(c.grid, q, e, st.src, ln.phi)
		if !ok {
			ln.outcome = outUtdReject
			return ln
		}
		t, ln.cell, measure = kt, kc, km
	case LaneSuffix:
		n = c.X
		face, count, ok := suffixFace(c.tr, c.mat, st.prim0, st.prim1, g, c.seed)
		if !ok {
			ln.outcome = outUtdReject
			return ln
		}
		r, ok := suffixPoint(c.tr, face, q, t)
		if !ok {
			ln.outcome = outUtdReject
			return ln
		}
		if !c.tr.visibleIgnoring(q, r, face) || !c.tr.visibleIgnoring(r, t, face) {
			ln.outcome = outVisReject
			return ln
		}
		ln.face, ln.count = face, count
		gain := c.mat.gainFor(face)
		fspl := sq(c.lambda/(4*math.Pi)) / math.Max(r.sub(t).dot(r.sub(t)), epsSmall)
		measure = gain * gain * fspl * math.Max(count, 1)
		t = r
	}
	if kind != LaneSuffix && !c.tr.visible(q, t) {
		ln.outcome = outVisReject
		return ln
	}
	wEdge := math.Max(st.tmax-st.tmin, 0) * float64(S) / math.Max(float64(n), 1)
	ln.c = c.weight(st, q, t, wEdge) * measure
	if !(ln.c > 0) || !finite(ln.c) {
		ln.outcome = outUtdReject
		return ln
	}
	ln.outcome = outCommit
	return ln
}

// weight is the diffraction weight W(s, Q, T, w_edge) of spec §6.1:
//
//	src_power·g_mat·(λ/4π)²·w_edge·cell_area·min(max(ext, π/4)/2π, 2)
//	  / (max(|Q−src|,1e-6)²·max(|T−Q|,1e-6)²)
func (c *directCall) weight(st *state, q, t vec3, wEdge float64) float64 {
	return diffractionWeight(st, c.mat, c.lambda, c.grid.area, q, t, wEdge)
}

func diffractionWeight(st *state, mv matView, lambda, area float64, q, t vec3, wEdge float64) float64 {
	sd := math.Max(q.sub(st.src).norm(), epsSmall)
	td := math.Max(t.sub(q).norm(), epsSmall)
	wedge := math.Min(math.Max(st.ext, math.Pi/4)/(2*math.Pi), 2)
	gain := mv.gainFor(mv.gainIndex(st.prim0, st.prim1))
	return st.power * gain * sq(lambda/(4*math.Pi)) * wEdge * area * wedge / (sd * sd * td * td)
}

func sq(x float64) float64 { return x * x }
