package rf

import (
	"fmt"
	"math"
)

// PathLayout is the row layout of TraceDfrPaths (RayD's DfrPathLayout).
type PathLayout int

// Path layouts.
const (
	// Compact packs the valid rows into [0, Count). The device order is
	// nondeterministic; this reference writes them in ascending lane order.
	Compact PathLayout = 0
	// SourceLane writes the row of lane g = (tx·R + rx)·M + s at row g and
	// leaves the other rows inert, so every row keeps its global identity.
	SourceLane PathLayout = 1
)

// PathOptions are the options of trace_dfr_paths (spec §7.2). Start from
// DefaultPathOptions.
type PathOptions struct {
	// MaxPaths caps the state limit M = min(S, MaxPaths); 0 selects S and a
	// negative value is rejected.
	MaxPaths int
	// Wavelength λ > 0.
	Wavelength float64
	// Layout is Compact or SourceLane.
	Layout PathLayout
	// TxPolarization is 3 float32 per transmitter, or one row broadcast to
	// all, or empty (x̂).
	TxPolarization []float32
}

// DefaultPathOptions returns RayD's single-device defaults: every state,
// λ = 1, Compact layout, x̂ polarization.
func DefaultPathOptions() PathOptions { return PathOptions{Wavelength: 1} }

// DfrPaths is the path export of trace_dfr_paths (spec §7.2): Capacity =
// T·R·M rows, Count valid rows. Vectors hold 3 values per row. An inert row
// has Valid false, ids -1, order 0 and zero delay, fields and points.
type DfrPaths struct {
	Capacity            int
	Count               int32
	Layout              PathLayout
	Valid               []bool
	TxID, RxID, Order   []int32
	Edge0, Edge1, Edge2 []int32
	Delay               []float64 // seconds
	FieldXRe, FieldXIm  []float64
	FieldYRe, FieldYIm  []float64
	FieldZRe, FieldZIm  []float64
	P0, P1, P2          []float64
}

// NewDfrPaths returns capacity inert rows in the given layout.
func NewDfrPaths(capacity int, layout PathLayout) *DfrPaths {
	p := &DfrPaths{Capacity: capacity, Layout: layout, Valid: make([]bool, capacity)}
	for _, s := range []*[]int32{&p.TxID, &p.RxID, &p.Edge0, &p.Edge1, &p.Edge2} {
		*s = make([]int32, capacity)
		for i := range *s {
			(*s)[i] = -1
		}
	}
	p.Order = make([]int32, capacity)
	for _, s := range []*[]float64{&p.Delay, &p.FieldXRe, &p.FieldXIm, &p.FieldYRe, &p.FieldYIm, &p.FieldZRe, &p.FieldZIm} {
		*s = make([]float64, capacity)
	}
	p.P0, p.P1, p.P2 = make([]float64, 3*capacity), make([]float64, 3*capacity), make([]float64, 3*capacity)
	return p
}

// AppendShard appends the rows of a SourceLane shard that ran transmitters
// [txStart, …) (the source_lane merge of multidevice §7.3): rows are
// concatenated, valid rows get txStart added to their tx id, counts add.
func (p *DfrPaths) AppendShard(o *DfrPaths, txStart int) error {
	if p.Layout != SourceLane || o.Layout != SourceLane {
		return fmt.Errorf("rf: only SourceLane path exports concatenate")
	}
	base := p.Capacity
	p.Capacity += o.Capacity
	p.Count += o.Count
	p.Valid = append(p.Valid, o.Valid...)
	p.TxID = append(p.TxID, o.TxID...)
	for i := base; i < p.Capacity; i++ {
		if p.Valid[i] {
			p.TxID[i] += int32(txStart)
		}
	}
	p.RxID = append(p.RxID, o.RxID...)
	p.Order = append(p.Order, o.Order...)
	p.Edge0, p.Edge1, p.Edge2 = append(p.Edge0, o.Edge0...), append(p.Edge1, o.Edge1...), append(p.Edge2, o.Edge2...)
	p.Delay = append(p.Delay, o.Delay...)
	p.FieldXRe, p.FieldXIm = append(p.FieldXRe, o.FieldXRe...), append(p.FieldXIm, o.FieldXIm...)
	p.FieldYRe, p.FieldYIm = append(p.FieldYRe, o.FieldYRe...), append(p.FieldYIm, o.FieldYIm...)
	p.FieldZRe, p.FieldZIm = append(p.FieldZRe, o.FieldZRe...), append(p.FieldZIm, o.FieldZIm...)
	p.P0, p.P1, p.P2 = append(p.P0, o.P0...), append(p.P1, o.P1...), append(p.P2, o.P2...)
	return nil
}

// TraceDfrPaths is trace_dfr_paths (spec §7.2): the first-order diffraction
// path of every (transmitter, receiver, state) lane g (PathLane), with its
// UTD field. tx holds 3 float32 per transmitter (only their count and
// polarization matter: the path source is states.src), rx 3 per receiver;
// active is required, one flag per state of the limit M. Per active lane
// (any failure skips it silently):
//
//	src, edge_pos, Rx finite; len = t_max − t_min > 1e-6
//	p = StationaryParameter(src, Rx, edge_pos + t_min·ê, ê) finite; Q = … + clamp(p, 0, len)·ê
//	Qv = Q + 1e-4·(n0+n1)/√max(|n0+n1|², 1e-6); vis(src, Qv) and vis(Qv, Rx)
//	E = UTD(state, Rx, k, pol[tx])·√max(src_power, 0); |E|² > 1e-30 and finite
//
// (ê = edge_dir/√max(|edge_dir|², 1e-6)). A valid row holds tx, rx, order 1,
// edge0 = edge_index[s], edge1 = edge2 = -1, delay (|Q−src| + |Rx−Q|)/c, the
// field E and p0 = Q.
func TraceDfrPaths(sc Scene, tx, rx []float32, st *DfrStates, m *DfrMaterial, active []bool, opt PathOptions) (*DfrPaths, error) {
	tr := tracer{sc}
	pv, err := validatePaths(tr.faces(), tx, rx, st, m, active, opt)
	if err != nil {
		return nil, err
	}
	M, R, np, mv, capacity := pv.limit, len(rx)/3, len(opt.TxPolarization), pv.mat, pv.capacity
	var states []state
	if M > 0 {
		states = widenStates(st, M)
	}
	out := NewDfrPaths(capacity, opt.Layout)
	k := 2 * math.Pi / opt.Wavelength
	omega := 2 * math.Pi * SpeedOfLight / opt.Wavelength
	for g := range int(capacity) {
		t, r, s := PathLane(uint32(g), M, R)
		if !active[s] {
			continue
		}
		pol := vec3{1, 0, 0}
		if np == 3 {
			pol = row3f(opt.TxPolarization, 0)
		} else if np > 0 {
			pol = row3f(opt.TxPolarization, t)
		}
		row, ok := pathLane(tr, mv, &states[s], row3f(rx, r), k, omega, pol)
		if !ok {
			continue
		}
		slot := g
		if opt.Layout == Compact {
			slot = int(out.Count)
		}
		out.Count++
		out.Valid[slot] = true
		out.TxID[slot], out.RxID[slot], out.Order[slot] = int32(t), int32(r), 1
		out.Edge0[slot] = states[s].edgeIndex
		out.Delay[slot] = row.delay
		out.FieldXRe[slot], out.FieldXIm[slot] = real(row.e[0]), imag(row.e[0])
		out.FieldYRe[slot], out.FieldYIm[slot] = real(row.e[1]), imag(row.e[1])
		out.FieldZRe[slot], out.FieldZIm[slot] = real(row.e[2]), imag(row.e[2])
		copy(out.P0[3*slot:3*slot+3], row.q[:])
	}
	return out, nil
}

// pathsValidated is what validatePaths found: the state limit M, the
// material and the capacity T·R·M.
type pathsValidated struct {
	limit, capacity int
	mat             matView
}

// validatePaths checks the inputs of trace_dfr_paths in RayD's order, then
// the size of the export, without allocating.
func validatePaths(faces int, tx, rx []float32, st *DfrStates, m *DfrMaterial, active []bool, opt PathOptions) (pathsValidated, error) {
	const op = "trace_dfr_paths"
	var v pathsValidated
	if len(tx)%3 != 0 {
		return v, newErr(op, "tx_positions", ErrLength, "length %d is not a multiple of 3", len(tx))
	}
	if len(rx)%3 != 0 {
		return v, newErr(op, "rx_positions", ErrLength, "length %d is not a multiple of 3", len(rx))
	}
	if st == nil {
		return v, newErr(op, "states", ErrInvalidArgument, "states are required")
	}
	T, R := len(tx)/3, len(rx)/3
	S := st.StateCount()
	M := S
	if opt.MaxPaths != 0 {
		M = min(S, opt.MaxPaths)
	}
	if M < 0 || st.Count < 0 {
		return v, newErr(op, "max_paths", ErrStateCount, "state_limit must be non-negative. (got %d)", M)
	}
	if err := checkWavelength(op, opt.Wavelength); err != nil {
		return v, err
	}
	if opt.Layout != Compact && opt.Layout != SourceLane {
		return v, newErr(op, "layout", ErrInvalidArgument, "diffraction path layout is invalid. (got %d)", opt.Layout)
	}
	np := len(opt.TxPolarization)
	if np%3 != 0 || (np != 0 && np != 3 && np != len(tx)) {
		return v, newErr(op, "tx_polarization", ErrLength, "tx_pol width must be 1 or match tx_pos. (%d values, %d transmitters)", np, T)
	}
	if M > 0 {
		view := *st
		view.Count = M
		if _, err := checkStateTable(op, &view); err != nil {
			return v, err
		}
	}
	if len(active) != M {
		return v, newErr(op, "active", ErrLength, "active must have shape [state_limit]. (%d, state_limit %d)", len(active), M)
	}
	var err error
	if v.mat, err = checkMaterial(op, m, faces, -1); err != nil {
		return v, err
	}
	capacity := int64(T) * int64(R) * int64(M)
	if capacity > math.MaxInt32 {
		return v, newErr(op, "capacity", ErrCapacity, "capacity does not fit in int32. (%d)", capacity)
	}
	v.limit, v.capacity = M, int(capacity)
	return v, checkResult(op, "export", v.capacity, PathRowBytes)
}

// ValidateTraceDfrPaths checks the arguments of TraceDfrPaths on a scene of
// faces faces exactly as it does (same rules, same order, same errors),
// including the size of the export against geom.HostMemoryLimit(), without
// tracing or allocating anything, and returns the export's capacity T·R·M.
func ValidateTraceDfrPaths(faces int, tx, rx []float32, st *DfrStates, m *DfrMaterial, active []bool, opt PathOptions) (capacity int, err error) {
	v, err := validatePaths(faces, tx, rx, st, m, active, opt)
	return v.capacity, err
}

type pathRow struct {
	q     vec3
	delay float64
	e     cvec
}

// pathLane evaluates one (state, receiver) lane.
func pathLane(tr tracer, mv matView, st *state, rx vec3, k, omega float64, pol vec3) (pathRow, bool) {
	length := st.tmax - st.tmin
	if !st.src.finite() || !st.pos.finite() || !rx.finite() || !(length > epsSmall) {
		return pathRow{}, false
	}
	e := st.dir.scale(1 / math.Sqrt(math.Max(st.dir.dot(st.dir), epsSmall)))
	origin := st.pos.add(e.scale(st.tmin))
	p := StationaryParameter(st.src, rx, origin, e)
	if !finite(p) {
		return pathRow{}, false
	}
	q := origin.add(e.scale(math.Min(math.Max(p, 0), length)))
	bis := st.n0.add(st.n1)
	qv := q.add(bis.scale(dfrBias / math.Sqrt(math.Max(bis.dot(bis), epsSmall))))
	if !tr.visible(st.src, qv) || !tr.visible(qv, rx) {
		return pathRow{}, false
	}
	in := utdInput{src: st.src, edgePos: st.pos, edgeDir: e, n0: st.n0, nn: st.n1,
		wedgeN: st.ext / math.Pi, lineMin: st.tmin, lineMax: st.tmax,
		face0: faceOf(mv, st.prim0), face1: faceOf(mv, st.prim1), k: k, omega: omega, txPol: pol}
	f := utdField(in, rx).mul(complex(math.Sqrt(math.Max(st.power, 0)), 0))
	if pw := f.power(); !(pw > 1e-30) || !finite(pw) || !f.finite() {
		return pathRow{}, false
	}
	return pathRow{q: q, delay: (q.sub(st.src).norm() + rx.sub(q).norm()) / SpeedOfLight, e: f}, true
}

// faceOf is the UTD material of face prim (absent when it has no valid
// material row); the gain is clamped at 0.
func faceOf(mv matView, prim int32) faceMat {
	if !mv.valid(prim) {
		return faceMat{}
	}
	eta, sigma, mu, gain := mv.face(prim)
	return faceMat{present: true, eta: eta, sigma: sigma, mu: mu, gain: math.Max(gain, 0)}
}
