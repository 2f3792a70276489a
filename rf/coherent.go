package rf

import (
	"fmt"
	"math"
)

// CoherentOptions are the scalar arguments of accum_dfr_coherent_direct
// (spec §6.4). Start from DefaultCoherentOptions.
type CoherentOptions struct {
	// Wavelength λ > 0.
	Wavelength float64
	// SelectDiffractionPoint places each lane's edge point at the stationary
	// (Fermat) point of its source and cell centre; otherwise at the edge
	// midpoint.
	SelectDiffractionPoint bool
	// PrefilterVisibility rejects lanes whose source or target segment is
	// blocked.
	PrefilterVisibility bool
	// LaneOffset and LaneCount select the window of the S·C lane space, as in
	// AccumOptions.
	LaneOffset, LaneCount int
}

// DefaultCoherentOptions returns RayD's defaults: λ = 1, stationary point
// selection and visibility prefilter on, the whole lane space.
func DefaultCoherentOptions() CoherentOptions {
	return CoherentOptions{Wavelength: 1, SelectDiffractionPoint: true, PrefilterVisibility: true, LaneCount: -1}
}

// CoherentResult is DfrCoherentAccum (spec §6.4): complex field grids and
// per-cell counters, all Res1 × Res0 row-major. Only DirectFieldXRe/XIm,
// DirectCount and the two reject counts can be non-zero (the multi-prefix
// fields belong to states with a reflection prefix, which this operation
// never produces).
type CoherentResult struct {
	Res0, Res1                     int       // grid resolution
	DirectFieldXRe, DirectFieldXIm []float64 // Σ √c·e^{iφ} per cell
	DirectFieldYRe, DirectFieldYIm []float64
	DirectFieldZRe, DirectFieldZIm []float64
	MultiFieldXRe, MultiFieldXIm   []float64 // fields of prefixed states (always zero here)
	MultiFieldYRe, MultiFieldYIm   []float64
	MultiFieldZRe, MultiFieldZIm   []float64
	DirectCount, MultiCount        []int32 // committed lanes per cell
	// VisibilityRejectCount and UtdRejectCount count the rejected lanes of
	// each cell.
	VisibilityRejectCount, UtdRejectCount []int32
}

func newCoherentResult(res0, res1 int) *CoherentResult {
	c := res0 * res1
	f := func() []float64 { return make([]float64, c) }
	i := func() []int32 { return make([]int32, c) }
	return &CoherentResult{Res0: res0, Res1: res1,
		DirectFieldXRe: f(), DirectFieldXIm: f(), DirectFieldYRe: f(), DirectFieldYIm: f(), DirectFieldZRe: f(), DirectFieldZIm: f(),
		MultiFieldXRe: f(), MultiFieldXIm: f(), MultiFieldYRe: f(), MultiFieldYIm: f(), MultiFieldZRe: f(), MultiFieldZIm: f(),
		DirectCount: i(), MultiCount: i(), VisibilityRejectCount: i(), UtdRejectCount: i()}
}

// Add merges o into r (grids and per-cell counters add). Shapes must match.
func (r *CoherentResult) Add(o *CoherentResult) error {
	if r.Res0 != o.Res0 || r.Res1 != o.Res1 {
		return fmt.Errorf("rf: cannot merge %dx%d coherent accumulation into %dx%d", o.Res1, o.Res0, r.Res1, r.Res0)
	}
	dst := [][]float64{r.DirectFieldXRe, r.DirectFieldXIm, r.DirectFieldYRe, r.DirectFieldYIm, r.DirectFieldZRe, r.DirectFieldZIm,
		r.MultiFieldXRe, r.MultiFieldXIm, r.MultiFieldYRe, r.MultiFieldYIm, r.MultiFieldZRe, r.MultiFieldZIm}
	of := [][]float64{o.DirectFieldXRe, o.DirectFieldXIm, o.DirectFieldYRe, o.DirectFieldYIm, o.DirectFieldZRe, o.DirectFieldZIm,
		o.MultiFieldXRe, o.MultiFieldXIm, o.MultiFieldYRe, o.MultiFieldYIm, o.MultiFieldZRe, o.MultiFieldZIm}
	for k, g := range dst {
		for i := range g {
			g[i] += of[k][i]
		}
	}
	ri := [][]int32{r.DirectCount, r.MultiCount, r.VisibilityRejectCount, r.UtdRejectCount}
	oi := [][]int32{o.DirectCount, o.MultiCount, o.VisibilityRejectCount, o.UtdRejectCount}
	for k, g := range ri {
		for i := range g {
			g[i] += oi[k][i]
		}
	}
	return nil
}

// AccumDfrCoherentDirect is accum_dfr_coherent_direct (spec §6.4): a
// deterministic, coherent first-order accumulation over the S·C lane space
// (lane g: state g mod S, cell g div S, see CoherentLane), restricted to the
// window of opt. Per active lane, with ê = normalize(edge_dir) and T the
// cell centre:
//
//	t_e = t_vis = (t_min + t_max)/2
//	select: p = StationaryParameter(src, T, edge_pos + t_min·ê, ê), len = t_max − t_min
//	        p non-finite or len ≤ 1e-6 ⇒ utd_reject_count[cell]++
//	        t_e = t_min + p ; t_vis = t_min + clamp(p, 0, len)
//	prefilter: !(vis(src, Qv) && vis(Qv, T)) ⇒ visibility_reject_count[cell]++
//	c = W(s, Q, T, max(len, 0)·S); !(c > 0) or non-finite ⇒ utd_reject_count[cell]++
//	φ = −k(max(|Q−src|,1e-6) + max(|T−Q|,1e-6)); field_x[cell] += √c·e^{iφ}; direct_count[cell]++
//
// The phase is evaluated exactly in float64 (the device uses float32 sin/cos
// without range reduction). Inactive lanes count nothing.
func AccumDfrCoherentDirect(sc Scene, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, opt CoherentOptions) (*CoherentResult, error) {
	const op = "accum_dfr_coherent_direct"
	tr := tracer{sc}
	v, err := validateCoherent(op, tr.faces(), st, g, m, active, opt)
	if err != nil {
		return nil, err
	}
	gv, mv, n, S := v.grid, v.mat, v.lanes, v.states
	states := widenStates(st, S)
	r := newCoherentResult(gv.res0, gv.res1)
	k := 2 * math.Pi / opt.Wavelength
	for l := opt.LaneOffset; l < opt.LaneOffset+n; l++ {
		s, cell := CoherentLane(uint32(l), S)
		if !isActive(active, s) {
			continue
		}
		st := &states[s]
		e := st.dir.normalize()
		t := gv.center(cell)
		te := 0.5 * (st.tmin + st.tmax)
		tv := te
		length := st.tmax - st.tmin
		if opt.SelectDiffractionPoint {
			p := StationaryParameter(st.src, t, st.pos.add(e.scale(st.tmin)), e)
			if !finite(p) || !(length > epsSmall) {
				r.UtdRejectCount[cell]++
				continue
			}
			te = st.tmin + p
			tv = st.tmin + math.Min(math.Max(p, 0), length)
		}
		q := st.pos.add(e.scale(te))
		qv := st.pos.add(e.scale(tv))
		if opt.PrefilterVisibility && !(tr.visible(st.src, qv) && tr.visible(qv, t)) {
			r.VisibilityRejectCount[cell]++
			continue
		}
		c := diffractionWeight(st, mv, opt.Wavelength, gv.area, q, t, math.Max(length, 0)*float64(S))
		if !(c > 0) || !finite(c) {
			r.UtdRejectCount[cell]++
			continue
		}
		phase := -k * (math.Max(q.sub(st.src).norm(), epsSmall) + math.Max(t.sub(q).norm(), epsSmall))
		a := math.Sqrt(c)
		sn, cs := math.Sincos(phase)
		r.DirectFieldXRe[cell] += a * cs
		r.DirectFieldXIm[cell] += a * sn
		r.DirectCount[cell]++
	}
	return r, nil
}

// validateCoherent checks the inputs of accum_dfr_coherent_direct in
// RayD's order, then the size of the result grids, without allocating.
func validateCoherent(op string, faces int, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, opt CoherentOptions) (validated, error) {
	var v validated
	if st != nil && st.Count < 0 {
		return v, newErr(op, "states.count", ErrStateCount, "state_limit must be non-negative.")
	}
	var err error
	if v.grid, err = checkGrid(op, g); err != nil {
		return v, err
	}
	if err := checkWavelength(op, opt.Wavelength); err != nil {
		return v, err
	}
	if v.states, err = checkStateTable(op, st); err != nil {
		return v, err
	}
	if v.mat, err = checkMaterial(op, m, faces, -1); err != nil {
		return v, err
	}
	total := int64(v.states) * int64(v.grid.cells)
	if err := checkInt32(op, "total_lane_count", total); err != nil {
		return v, err
	}
	if v.lanes, err = resolveWindow(op, opt.LaneOffset, opt.LaneCount, int(total)); err != nil {
		return v, err
	}
	if err := checkActive(op, active, v.states); err != nil {
		return v, err
	}
	return v, checkResult(op, "grids", v.grid.cells, CoherentCellBytes)
}

// ValidateAccumDfrCoherentDirect checks the arguments of
// AccumDfrCoherentDirect on a scene of faces faces exactly as it does,
// including the size of the result grids against geom.HostMemoryLimit(),
// without tracing or allocating anything, and returns the number of lanes
// of the window.
func ValidateAccumDfrCoherentDirect(faces int, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, opt CoherentOptions) (lanes int, err error) {
	v, err := validateCoherent("accum_dfr_coherent_direct", faces, st, g, m, active, opt)
	return v.lanes, err
}

// StationaryParameter is the edge parameter, measured from origin along the
// edge direction dir (normalized here), of the first-order diffraction point
// of a source and a target: the point Q of the edge line minimizing
// |src − Q| + |Q − target| (Fermat / Keller law: equal angles with the
// edge). Unfolding the target about the edge line into the half-plane
// opposite the source makes the optimal path straight, which gives, with a
// and b the axial coordinates and ρs, ρt the radial distances of source and
// target,
//
//	p = (a·ρt + b·ρs) / (ρs + ρt).
//
// It is NaN when both points lie on the edge line. RayD computes the same
// point by rotating the target about the edge and intersecting the source →
// rotated-target line with the edge.
func StationaryParameter(src, target, origin, dir [3]float64) float64 {
	e := vec3(dir).normalize()
	so, to := vec3(src).sub(origin), vec3(target).sub(origin)
	a, b := so.dot(e), to.dot(e)
	rs := so.sub(e.scale(a)).norm()
	rt := to.sub(e.scale(b)).norm()
	return (a*rt + b*rs) / (rs + rt)
}
