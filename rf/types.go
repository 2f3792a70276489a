package rf

import "math"

// DfrStates are the diffraction states of spec §6.1, one row per state, in
// the device layout: vectors hold 3 float32 per state (x, y, z), scalars one.
// Every slice must cover the logical state count S (it may be longer; rows
// past S are ignored). Wi and D0 are optional (empty means zeros).
type DfrStates struct {
	EdgeIndex     []int32   // caller tag of the edge, echoed as edge0 by TraceDfrPaths
	EdgePos       []float32 // a point on the edge line
	EdgeDir       []float32 // edge direction (normalized internally)
	EdgeTMin      []float32 // edge extent along the normalized direction from EdgePos
	EdgeTMax      []float32
	N0, N1        []float32 // unit normals of the two wedge faces
	Prim0, Prim1  []int32   // global face ids for material lookup (-1 = none)
	ExteriorAngle []float32 // wedge exterior angle in radians (UTD n = angle/π)
	Src           []float32 // source point seen by the state
	SrcPower      []float32 // source power weight
	Wi, D0        []float32 // optional incident direction / auxiliary vector
	// Count is the logical state count S. Zero selects len(EdgeIndex) (RayD's
	// count=None); a negative value is rejected with ErrStateCount. A
	// zero-state set is expressed with empty slices.
	Count int
}

// StateCount returns the logical state count S: Count when positive,
// otherwise len(EdgeIndex).
func (s *DfrStates) StateCount() int {
	if s.Count != 0 {
		return s.Count
	}
	return len(s.EdgeIndex)
}

// DfrGrid is the receiver grid of spec §6.1: the plane with normal axis Axis
// (0, 1, 2) at coordinate Position, spanning [Coord0Min, Coord0Max) ×
// [Coord1Min, Coord1Max) in the plane coordinates (axis 0: (y, z), axis 1:
// (x, z), axis 2: (x, y)), split into Res0 × Res1 cells. Cell c = j·Res0 + i
// has centre (min0 + (i+½)/Res0·span0, min1 + (j+½)/Res1·span1); output grids
// are row-major (Res1, Res0). CellArea 0 selects |span0·span1|/(Res0·Res1).
type DfrGrid struct {
	Axis                 int
	Position             float64
	Coord0Min, Coord0Max float64
	Coord1Min, Coord1Max float64
	Res0, Res1           int
	CellArea             float64
}

// AccumGrid is the grid of AccumulateReflections (RayD's AccumGrid): the
// fields of DfrGrid without a cell area (it is always |span0·span1|/cells).
type AccumGrid struct {
	Axis                 int
	Position             float64
	Coord0Min, Coord0Max float64
	Coord1Min, Coord1Max float64
	Res0, Res1           int
}

// Cells is Res0·Res1.
func (g DfrGrid) Cells() int { return g.Res0 * g.Res1 }

// Cells is Res0·Res1.
func (g AccumGrid) Cells() int { return g.Res0 * g.Res1 }

// DfrMaterial holds per-scene-face material parameters (spec §6.1): relative
// permittivity EtaR, conductivity Sigma (S/m), relative permeability MuR, an
// amplitude Gain and a validity flag. All five slices have one entry per
// global face. A nil *DfrMaterial is the default material (1, 0, 1, 1, true)
// on every face of the scene.
type DfrMaterial struct {
	EtaR, Sigma, MuR, Gain []float32
	Valid                  []bool
}

// ReflMaterial is the per-face material of AccumulateReflections (RayD's
// ReflMaterial); it has exactly the fields of DfrMaterial.
type ReflMaterial = DfrMaterial

// DefaultMaterial returns the default material (eta_r 1, sigma 0, mu_r 1,
// gain 1, valid) for faces faces.
func DefaultMaterial(faces int) *DfrMaterial {
	m := &DfrMaterial{
		EtaR: make([]float32, faces), Sigma: make([]float32, faces),
		MuR: make([]float32, faces), Gain: make([]float32, faces), Valid: make([]bool, faces),
	}
	for i := range faces {
		m.EtaR[i], m.MuR[i], m.Gain[i], m.Valid[i] = 1, 1, 1, true
	}
	return m
}

// state is one diffraction state widened to float64.
type state struct {
	edgeIndex    int32
	pos, dir     vec3 // dir is the raw (unnormalized) direction
	tmin, tmax   float64
	n0, n1       vec3
	prim0, prim1 int32
	ext          float64
	src          vec3
	power        float64
	wi           vec3
}

// gridView is a validated grid in float64 with its resolved cell area.
type gridView struct {
	axis              int
	pos               float64
	min0, max0, min1  float64
	max1              float64
	res0, res1, cells int
	area              float64
}

// matView is a validated material table (or the default material over n
// faces when def is set).
type matView struct {
	n   int
	def bool
	m   *DfrMaterial
}

func (mv matView) valid(prim int32) bool {
	if prim < 0 || int(prim) >= mv.n {
		return false
	}
	return mv.def || mv.m.Valid[prim]
}

func (mv matView) rawGain(prim int32) float64 {
	if mv.def {
		return 1
	}
	return float64(mv.m.Gain[prim])
}

// gainIndex is the material row of a state (spec §6.1): prim0 when valid and
// in range, else prim1, else -1.
func (mv matView) gainIndex(prim0, prim1 int32) int32 {
	if mv.valid(prim0) {
		return prim0
	}
	if mv.valid(prim1) {
		return prim1
	}
	return -1
}

// gainFor is the clamped gain max(gain, 0) of row idx, or 1 for idx < 0.
func (mv matView) gainFor(idx int32) float64 {
	if idx < 0 {
		return 1
	}
	return math.Max(mv.rawGain(idx), 0)
}

// face returns the (eta_r, sigma, mu_r, gain) of a valid face.
func (mv matView) face(prim int32) (eta, sigma, mu, gain float64) {
	if mv.def {
		return 1, 0, 1, 1
	}
	m := mv.m
	return float64(m.EtaR[prim]), float64(m.Sigma[prim]), float64(m.MuR[prim]), float64(m.Gain[prim])
}

func row3f(v []float32, i int) vec3 {
	return vec3{float64(v[3*i]), float64(v[3*i+1]), float64(v[3*i+2])}
}

// checkStates validates the state table against its logical count and
// widens the first S rows to float64.
func checkStates(op string, s *DfrStates) ([]state, error) {
	n, err := checkStateTable(op, s)
	if err != nil {
		return nil, err
	}
	return widenStates(s, n), nil
}

// checkStateTable validates the state table against its logical count
// without allocating and returns the count S.
func checkStateTable(op string, s *DfrStates) (int, error) {
	if s == nil {
		return 0, newErr(op, "states", ErrInvalidArgument, "states are required")
	}
	n := s.StateCount()
	if s.Count < 0 {
		return 0, newErr(op, "states.count", ErrStateCount, "state_limit must be non-negative.")
	}
	if n > len(s.EdgeIndex) {
		return 0, newErr(op, "states.count", ErrStateCount,
			"state_limit must not exceed state_edge_index width (%d > %d).", n, len(s.EdgeIndex))
	}
	for _, c := range []struct {
		name string
		got  int
		per  int
		opt  bool
	}{
		{"states.edge_pos", len(s.EdgePos), 3, false},
		{"states.edge_dir", len(s.EdgeDir), 3, false},
		{"states.edge_t_min", len(s.EdgeTMin), 1, false},
		{"states.edge_t_max", len(s.EdgeTMax), 1, false},
		{"states.n0", len(s.N0), 3, false},
		{"states.n1", len(s.N1), 3, false},
		{"states.prim0", len(s.Prim0), 1, false},
		{"states.prim1", len(s.Prim1), 1, false},
		{"states.exterior_angle", len(s.ExteriorAngle), 1, false},
		{"states.src", len(s.Src), 3, false},
		{"states.src_power", len(s.SrcPower), 1, false},
		{"states.wi", len(s.Wi), 3, true},
		{"states.d0", len(s.D0), 3, true},
	} {
		if c.opt && c.got == 0 {
			continue
		}
		if c.got%c.per != 0 {
			return 0, newErr(op, c.name, ErrLength, "length %d is not a multiple of %d", c.got, c.per)
		}
		if c.got/c.per < n {
			return 0, newErr(op, c.name, ErrLength, "must cover state_count (%d rows, need %d)", c.got/c.per, n)
		}
	}
	return n, nil
}

// widenStates widens the first n rows of a validated state table.
func widenStates(s *DfrStates, n int) []state {
	out := make([]state, n)
	for i := range out {
		st := &out[i]
		st.edgeIndex = s.EdgeIndex[i]
		st.pos, st.dir = row3f(s.EdgePos, i), row3f(s.EdgeDir, i)
		st.tmin, st.tmax = float64(s.EdgeTMin[i]), float64(s.EdgeTMax[i])
		st.n0, st.n1 = row3f(s.N0, i), row3f(s.N1, i)
		st.prim0, st.prim1 = s.Prim0[i], s.Prim1[i]
		st.ext = float64(s.ExteriorAngle[i])
		st.src = row3f(s.Src, i)
		st.power = float64(s.SrcPower[i])
		if len(s.Wi) > 0 {
			st.wi = row3f(s.Wi, i)
		}
	}
	return out
}

// checkGrid validates a grid (spec §6.1: axis, ordered finite bounds,
// positive resolutions, positive cell area, int32 cell count).
func checkGrid(op string, g DfrGrid) (gridView, error) {
	gv, err := checkAccumGrid(op, AccumGrid{g.Axis, g.Position, g.Coord0Min, g.Coord0Max, g.Coord1Min, g.Coord1Max, g.Res0, g.Res1}, true)
	if err != nil {
		return gv, err
	}
	if g.CellArea != 0 {
		gv.area = g.CellArea
	}
	if !(gv.area > 0) || math.IsInf(gv.area, 0) {
		return gv, newErr(op, "grid.cell_area", ErrGrid, "grid_cell_area must be positive (got %v).", gv.area)
	}
	return gv, nil
}

// checkAccumGrid validates the axis, resolutions and (when ordered is set)
// the bounds of a grid and derives |span0·span1|/cells as its cell area.
func checkAccumGrid(op string, g AccumGrid, ordered bool) (gridView, error) {
	gv := gridView{axis: g.Axis, pos: g.Position, min0: g.Coord0Min, max0: g.Coord0Max,
		min1: g.Coord1Min, max1: g.Coord1Max, res0: g.Res0, res1: g.Res1}
	if g.Axis < 0 || g.Axis > 2 {
		return gv, newErr(op, "grid.axis", ErrGrid, "grid_axis must be 0, 1, or 2 (got %d).", g.Axis)
	}
	if ordered && !(g.Coord0Min < g.Coord0Max) {
		return gv, newErr(op, "grid.coord0", ErrGrid, "grid bounds must be ordered (coord0 [%v, %v]).", g.Coord0Min, g.Coord0Max)
	}
	if ordered && !(g.Coord1Min < g.Coord1Max) {
		return gv, newErr(op, "grid.coord1", ErrGrid, "grid bounds must be ordered (coord1 [%v, %v]).", g.Coord1Min, g.Coord1Max)
	}
	if g.Res0 <= 0 {
		return gv, newErr(op, "grid.resolution0", ErrGrid, "grid resolutions must be positive (got %d).", g.Res0)
	}
	if g.Res1 <= 0 {
		return gv, newErr(op, "grid.resolution1", ErrGrid, "grid resolutions must be positive (got %d).", g.Res1)
	}
	if int64(g.Res0)*int64(g.Res1) > math.MaxInt32 {
		return gv, newErr(op, "grid.resolution", ErrGrid, "cell count %d×%d does not fit in int32.", g.Res0, g.Res1)
	}
	gv.cells = g.Res0 * g.Res1
	gv.area = math.Abs((g.Coord0Max-g.Coord0Min)*(g.Coord1Max-g.Coord1Min)) / float64(gv.cells)
	return gv, nil
}

// checkWavelength requires a finite λ > 0.
func checkWavelength(op string, lambda float64) error {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return newErr(op, "wavelength", ErrInvalidArgument, "wavelength must be positive (got %v).", lambda)
	}
	return nil
}

// checkActive accepts an empty mask, a single broadcast flag or one flag per
// state.
func checkActive(op string, active []bool, n int) error {
	if len(active) == 0 || len(active) == 1 || len(active) == n {
		return nil
	}
	return newErr(op, "active", ErrLength, "active width must be 1 or match state_count (%d, state_count %d).", len(active), n)
}

func isActive(active []bool, s int) bool {
	switch len(active) {
	case 0:
		return true
	case 1:
		return active[0]
	}
	return active[s]
}

// checkMaterial validates an explicit material (non-empty, five equal
// widths; exact, when want >= 0, to want faces) or resolves nil to the
// default material over the scene's faces.
func checkMaterial(op string, m *DfrMaterial, faces, want int) (matView, error) {
	if m == nil {
		return matView{n: faces, def: true}, nil
	}
	n := len(m.Gain)
	if want < 0 && n == 0 {
		return matView{}, newErr(op, "material", ErrLength, "material payload must not be empty.")
	}
	for _, c := range []struct {
		name string
		got  int
	}{{"material.eta_r", len(m.EtaR)}, {"material.sigma", len(m.Sigma)}, {"material.mu_r", len(m.MuR)}, {"material.valid", len(m.Valid)}} {
		if c.got != n {
			return matView{}, newErr(op, c.name, ErrLength, "material payload fields must have matching widths (%d, gain has %d).", c.got, n)
		}
	}
	if want >= 0 && n != want {
		return matView{}, newErr(op, "material", ErrLength, "material payload must match the scene triangle count (%d, scene has %d).", n, want)
	}
	return matView{n: n, m: m}, nil
}

// checkInt32 rejects a count that does not fit the device index type.
func checkInt32(op, field string, v int64) error {
	if v < 0 || v > math.MaxInt32 {
		return newErr(op, field, ErrCapacity, "%s does not fit in int32 (%d).", field, v)
	}
	return nil
}

// planeCoords maps a point to the plane coordinates (c0, c1) of axis.
func planeCoords(p vec3, axis int) (float64, float64) {
	switch axis {
	case 0:
		return p[1], p[2]
	case 1:
		return p[0], p[2]
	}
	return p[0], p[1]
}

// planePoint builds the 3D point with coordinate pos on axis and plane
// coordinates (c0, c1).
func planePoint(axis int, pos, c0, c1 float64) vec3 {
	switch axis {
	case 0:
		return vec3{pos, c0, c1}
	case 1:
		return vec3{c0, pos, c1}
	}
	return vec3{c0, c1, pos}
}

// center is the centre of cell c.
func (g gridView) center(c int) vec3 {
	i, j := c%g.res0, c/g.res0
	u := (float64(i) + 0.5) / float64(g.res0)
	v := (float64(j) + 0.5) / float64(g.res1)
	return planePoint(g.axis, g.pos, g.min0+u*(g.max0-g.min0), g.min1+v*(g.max1-g.min1))
}

// cellOf returns the cell holding a point of the plane: its coordinates must
// lie in [min0, max0) × [min1, max1); the index is clamped to the grid.
func (g gridView) cellOf(p vec3) (int, bool) {
	c0, c1 := planeCoords(p, g.axis)
	if !(c0 >= g.min0 && c0 < g.max0 && c1 >= g.min1 && c1 < g.max1) {
		return 0, false
	}
	u := (c0 - g.min0) / math.Max(g.max0-g.min0, epsSmall)
	v := (c1 - g.min1) / math.Max(g.max1-g.min1, epsSmall)
	i := min(max(int(u*float64(g.res0)), 0), g.res0-1)
	j := min(max(int(v*float64(g.res1)), 0), g.res1-1)
	return j*g.res0 + i, true
}
