package rf

import (
	"errors"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// ReflOptions are the options of accumulate_reflections (RayD's
// AccumOptions, spec §7.1). Start from DefaultReflOptions. The strategy and
// threshold knobs only choose a summation route on the device; they are
// validated here and otherwise ignored.
type ReflOptions struct {
	Wavelength              float64 // λ > 0
	SolidAnglePerRay        float64 // Ω ≥ 0, the solid angle each ray carries
	IncludeLOS              bool    // also accumulate the unreflected (depth 0) crossing
	CollectWedges           bool    // record reflection hit events
	CollectWedgePrefixes    bool    // record events at every depth, not only depth 0
	WedgeCapacity           int     // ≥ 0: rows of the event buffer
	WedgeSampleStride       int     // > 0: keep one prefix event in stride
	AccumulationStrategy    int     // 0..4
	CompactMinSamples       int     // ≥ 0
	StagedMinSamplesPerCell int     // ≥ 0
	ProceduralSampleCount   int     // ≥ 0, unused
}

// DefaultReflOptions returns RayD's defaults: λ = 1, Ω = 1, no LOS, no
// wedge collection, stride 1, automatic strategy.
func DefaultReflOptions() ReflOptions {
	return ReflOptions{Wavelength: 1, SolidAnglePerRay: 1, WedgeSampleStride: 1}
}

// ReflRays is the ray batch of accumulate_reflections: N rows of origin O
// and direction D (3 float32 each, D normalized internally), optional TMax
// (N or empty; only the first segment uses it, non-finite means 1e8), the
// per-row image-source seed TxPosition (3N), the optional transmitter
// polarization TxPolarization (3N or empty = x̂) and the optional Active mask
// (N or empty).
type ReflRays struct {
	O, D, TMax     []float32
	TxPosition     []float32
	TxPolarization []float32
	Active         []bool
}

// WedgeEvents is the bounded buffer of reflection hit events. Count is the
// number of events produced; only the first Capacity are stored (rows past
// Count are inert: ray index, prim and depth -1, vectors 0). Vectors hold 3
// values per row.
type WedgeEvents struct {
	Capacity    int
	Count       int32
	RayIndex    []int32
	Hit, Normal []float64
	Prim        []int32
	Dir         []float64 // incoming direction
	Source      []float64 // image source before the bounce
	SourcePower []float64 // |E|²·Ω before the bounce (times the stride when sampled)
	InitialDir  []float64
	Depth       []int32
}

// ReflResult is RayD's AccumResult (spec §7.1): the seven float grids (Res1 ×
// Res0, row-major) and the number of committed plane crossings.
type ReflResult struct {
	RayCount, MaxBounces int
	Res0, Res1           int
	Power                []float64 // Σ|Ec|²
	FieldXRe, FieldXIm   []float64 // Σ Ec
	FieldYRe, FieldYIm   []float64
	FieldZRe, FieldZIm   []float64
	ReflectionCount      int32
	Wedges               WedgeEvents
}

func (r *ReflResult) grids() [][]float64 {
	return [][]float64{r.Power, r.FieldXRe, r.FieldXIm, r.FieldYRe, r.FieldYIm, r.FieldZRe, r.FieldZIm}
}

// Add merges the result of another row window into r (the grid_reduce merge
// of multidevice §7.2): grids, reflection counts, ray counts and wedge counts
// add. Bounded wedge buffers (Capacity ≠ 0) and different bounce counts or
// grids are refused.
func (r *ReflResult) Add(o *ReflResult) error {
	if r.Wedges.Capacity != 0 || o.Wedges.Capacity != 0 {
		return errors.New("rf: cannot merge bounded wedge-event buffers")
	}
	if r.MaxBounces != o.MaxBounces || r.Res0 != o.Res0 || r.Res1 != o.Res1 {
		return errors.New("rf: incompatible result metadata")
	}
	og := o.grids()
	for k, g := range r.grids() {
		for i := range g {
			g[i] += og[k][i]
		}
	}
	r.ReflectionCount += o.ReflectionCount
	r.RayCount += o.RayCount
	r.Wedges.Count += o.Wedges.Count
	return nil
}

// reflCall is a validated accumulate_reflections call.
type reflCall struct {
	tr         tracer
	rays       ReflRays
	grid       gridView
	mat        matView
	opt        ReflOptions
	k, omega   float64
	maxBounces int
	res        *ReflResult
}

// AccumulateReflections is accumulate_reflections (spec §7.1), a float64
// reference: each active row follows its specular chain for up to
// maxBounces reflections, carrying a complex vector field E (initially the
// unit transmitter polarization made transverse to the ray) and an image
// source I (seeded with TxPosition). Every segment at depth > 0 (and depth
// 0 with IncludeLOS) that crosses the grid plane before its blocker commits
//
//	Ec = E · λ/(4π·max(D,1e-6)) · √(Ω/max(A_cell,1e-6) · D²/max(|d̂_axis|,1e-6)) · e^{−i(kD mod 2π)}
//
// to the crossed cell, D = |X' − I| being the unfolded path length to the
// plane point X'. Reflections use the Fresnel coefficients of the hit face
// (complex permittivity η = eta_r − iσ/(ωε0)); an invalid face, or a zero
// reflected field, ends the chain. The material must have one row per scene
// face (nil is the default material, which reflects nothing).
func AccumulateReflections(sc Scene, rays ReflRays, g AccumGrid, m *ReflMaterial, maxBounces int, opt ReflOptions) (*ReflResult, error) {
	c, err := newReflCall(sc, rays, g, m, maxBounces, opt)
	if err != nil {
		return nil, err
	}
	for i := range c.res.RayCount {
		if len(rays.Active) > 0 && !rays.Active[i] {
			continue
		}
		c.row(i)
	}
	return c.res, nil
}

func newReflCall(sc Scene, rays ReflRays, g AccumGrid, m *ReflMaterial, maxBounces int, opt ReflOptions) (*reflCall, error) {
	tr := tracer{sc}
	v, err := validateRefl(tr.faces(), rays, g, m, maxBounces, opt)
	if err != nil {
		return nil, err
	}
	gv := v.grid
	res := &ReflResult{RayCount: v.lanes, MaxBounces: maxBounces, Res0: gv.res0, Res1: gv.res1}
	cells := gv.cells
	for _, p := range []*[]float64{&res.Power, &res.FieldXRe, &res.FieldXIm, &res.FieldYRe, &res.FieldYIm, &res.FieldZRe, &res.FieldZIm} {
		*p = make([]float64, cells)
	}
	if opt.CollectWedges {
		res.Wedges = newWedgeEvents(opt.WedgeCapacity)
	}
	return &reflCall{tr: tr, rays: rays, grid: gv, mat: v.mat, opt: opt, maxBounces: maxBounces, res: res,
		k: 2 * math.Pi / opt.Wavelength, omega: math.Max(2*math.Pi*SpeedOfLight/math.Max(opt.Wavelength, epsSmall), epsSmall)}, nil
}

// validateRefl checks the inputs of accumulate_reflections in RayD's order
// (max_bounces also against geom.MaxBounces), then the size of the result
// grids and of the wedge buffer when it is collected, without allocating.
// lanes holds the ray count.
func validateRefl(faces int, rays ReflRays, g AccumGrid, m *ReflMaterial, maxBounces int, opt ReflOptions) (validated, error) {
	const op = "accumulate_reflections"
	var v validated
	if len(rays.O)%3 != 0 {
		return v, newErr(op, "ray.o", ErrLength, "length %d is not a multiple of 3", len(rays.O))
	}
	n := len(rays.O) / 3
	for _, c := range []struct {
		name     string
		got, per int
		opt      bool
	}{
		{"ray.d", len(rays.D), 3, false}, {"ray.tmax", len(rays.TMax), 1, true},
		{"tx_position", len(rays.TxPosition), 3, false}, {"tx_polarization", len(rays.TxPolarization), 3, true},
		{"active", len(rays.Active), 1, true},
	} {
		if (c.opt && c.got == 0) || c.got == n*c.per {
			continue
		}
		return v, newErr(op, c.name, ErrLength, "must match the ray batch size (%d values, want %d)", c.got, n*c.per)
	}
	if maxBounces < 0 {
		return v, newErr(op, "max_bounces", ErrInvalidArgument, "max_bounces must be non-negative. (got %d)", maxBounces)
	}
	if maxBounces > geom.MaxBounces {
		return v, newErr(op, "max_bounces", ErrInvalidArgument, "max_bounces %d exceeds the limit of %d bounces (geom.MaxBounces).",
			maxBounces, geom.MaxBounces)
	}
	var err error
	if v.grid, err = checkAccumGrid(op, g, false); err != nil {
		return v, err
	}
	if err := checkWavelength(op, opt.Wavelength); err != nil {
		return v, err
	}
	for _, c := range []struct {
		field, msg string
		bad        bool
	}{
		{"solid_angle_per_ray", "solid_angle_per_ray must be non-negative.", !(opt.SolidAnglePerRay >= 0) || math.IsInf(opt.SolidAnglePerRay, 0)},
		{"wedge_capacity", "wedge_capacity must be non-negative.", opt.WedgeCapacity < 0 || opt.WedgeCapacity > math.MaxInt32},
		{"wedge_sample_stride", "wedge_sample_stride must be positive.", opt.WedgeSampleStride <= 0 || opt.WedgeSampleStride > math.MaxInt32},
		{"accumulation_strategy", "accumulation_strategy is not supported.", opt.AccumulationStrategy < 0 || opt.AccumulationStrategy > 4},
		{"accumulation_thresholds", "accumulation thresholds and procedural_sample_count must be non-negative.",
			opt.CompactMinSamples < 0 || opt.StagedMinSamplesPerCell < 0 || opt.ProceduralSampleCount < 0},
	} {
		if c.bad {
			return v, newErr(op, c.field, ErrInvalidArgument, "%s", c.msg)
		}
	}
	if v.mat, err = checkMaterial(op, m, faces, faces); err != nil {
		return v, err
	}
	v.lanes = n
	if err := checkResult(op, "grids", v.grid.cells, AccumCellBytes); err != nil {
		return v, err
	}
	if opt.CollectWedges {
		if err := checkResult(op, "wedge events", opt.WedgeCapacity, WedgeEventBytes); err != nil {
			return v, err
		}
	}
	return v, nil
}

// ValidateAccumulateReflections checks the arguments of
// AccumulateReflections on a scene of faces faces exactly as it does (same
// rules, same order, same errors), including the size of the result grids
// and of the wedge buffer against geom.HostMemoryLimit(), without tracing
// or allocating anything.
func ValidateAccumulateReflections(faces int, rays ReflRays, g AccumGrid, m *ReflMaterial, maxBounces int, opt ReflOptions) error {
	_, err := validateRefl(faces, rays, g, m, maxBounces, opt)
	return err
}

func newWedgeEvents(capacity int) WedgeEvents {
	w := WedgeEvents{Capacity: capacity,
		RayIndex: make([]int32, capacity), Prim: make([]int32, capacity), Depth: make([]int32, capacity),
		Hit: make([]float64, 3*capacity), Normal: make([]float64, 3*capacity), Dir: make([]float64, 3*capacity),
		Source: make([]float64, 3*capacity), SourcePower: make([]float64, capacity), InitialDir: make([]float64, 3*capacity)}
	for i := range capacity {
		w.RayIndex[i], w.Prim[i], w.Depth[i] = -1, -1, -1
	}
	return w
}

// row follows the specular chain of ray i.
func (c *reflCall) row(i int) {
	o := row3f(c.rays.O, i)
	d := row3f(c.rays.D, i).normalize()
	initial := d
	img := row3f(c.rays.TxPosition, i)
	pol := vec3{1, 0, 0}
	if len(c.rays.TxPolarization) > 0 {
		pol = row3f(c.rays.TxPolarization, i)
	}
	tp := pol.sub(d.scale(pol.dot(d)))
	if tp.dot(tp) <= normFloor {
		tp = stablePerp(d, pol)
	} else {
		tp = tp.normalize()
	}
	e := along(tp, 1)
	for depth := 0; depth <= c.maxBounces; depth++ {
		tmax := traceTMax
		if depth == 0 && len(c.rays.TMax) > 0 && finite(float64(c.rays.TMax[i])) {
			tmax = float64(c.rays.TMax[i])
		}
		hit, ok := c.tr.closest(o, d, tmax)
		tb := traceTMax
		if ok {
			tb = float64(hit.T)
		}
		if (depth > 0 || c.opt.IncludeLOS) && e.power() > 0 {
			c.plane(o, d, tb, img, e)
		}
		if !ok || depth == c.maxBounces {
			return
		}
		p0, e1, e2, n := c.tr.triangle(hit.Prim)
		p := p0.add(e1.scale(float64(hit.U))).add(e2.scale(float64(hit.V)))
		if d.dot(n) > 0 {
			n = n.neg()
		}
		refl, r := c.fresnelReflect(e, d, n, hit.Prim)
		if refl.power() <= 0 {
			return
		}
		c.storeWedge(i, depth, hit.Prim, p, n, d, img, e.power()*c.opt.SolidAnglePerRay, initial)
		img = img.sub(n.scale(2 * img.sub(p).dot(n)))
		e, d = refl, r
		off := multipathBias * (1 + math.Max(math.Abs(p[0]), math.Max(math.Abs(p[1]), math.Abs(p[2]))))
		if d.dot(n) < 0 {
			off = -off
		}
		o = p.add(n.scale(off))
	}
}

// plane commits the crossing of the segment o + t·d, t < tb, with the grid
// plane (spec §7.1 PLANE).
func (c *reflCall) plane(o, d vec3, tb float64, img vec3, e cvec) {
	g := c.grid
	a := d[g.axis]
	if math.Abs(a) <= epsSmall {
		return
	}
	safe := a + epsSmall
	if a < 0 {
		safe = a - epsSmall
	}
	tp := (g.pos - o[g.axis]) / safe
	if !(tp > multipathBias && tp < tb) {
		return
	}
	c0, c1 := planeCoords(o.add(d.scale(tp)), g.axis)
	if !(c0 >= g.min0 && c0 < g.max0 && c1 >= g.min1 && c1 < g.max1) {
		return
	}
	span0, span1 := g.max0-g.min0, g.max1-g.min1
	if span0 <= 0 || span1 <= 0 {
		return
	}
	ix := min(max(int((c0-g.min0)/span0*float64(g.res0)), 0), g.res0-1)
	iy := min(max(int((c1-g.min1)/span1*float64(g.res1)), 0), g.res1-1)
	cell := iy*g.res0 + ix
	dist := planePoint(g.axis, g.pos, c0, c1).sub(img).norm()
	fspl := c.opt.Wavelength / (4 * math.Pi * math.Max(dist, epsSmall))
	geomScale := c.opt.SolidAnglePerRay / math.Max(g.area, epsSmall) * dist * dist / math.Max(math.Abs(a), epsSmall)
	amp := fspl * math.Sqrt(math.Max(geomScale, 0))
	ec := e.mul(expI(-math.Mod(c.k*dist, 2*math.Pi)) * complex(amp, 0))
	p := ec.power()
	if !ec.finite() || !(p > 0) || !finite(p) {
		return
	}
	r := c.res
	r.Power[cell] += p
	r.FieldXRe[cell] += real(ec[0])
	r.FieldXIm[cell] += imag(ec[0])
	r.FieldYRe[cell] += real(ec[1])
	r.FieldYIm[cell] += imag(ec[1])
	r.FieldZRe[cell] += real(ec[2])
	r.FieldZIm[cell] += imag(ec[2])
	r.ReflectionCount++
}

// fresnelReflect reflects the field e travelling along unit d on a face
// with unit normal n (d·n ≤ 0): E' = r_te(E·ŝ)ŝ + r_tm(E·p̂_in)p̂_out with
// ŝ = normalize(n × d), p̂_in = normalize(ŝ × d), p̂_out = normalize(ŝ × r̂).
// It returns E' and the reflected direction r̂; an invalid face gives 0.
func (c *reflCall) fresnelReflect(e cvec, d, n vec3, prim int32) (cvec, vec3) {
	dn := d.dot(n)
	r := d.sub(n.scale(2 * dn)).normalize()
	perp := func(v, axis vec3) vec3 {
		if v.dot(v) <= normFloor {
			return stablePerp(axis, n)
		}
		return v.normalize()
	}
	s := perp(n.cross(d), d)
	pin := perp(s.cross(d), d)
	pout := perp(s.cross(r), r)
	if !c.mat.valid(prim) {
		return cvec{}, r
	}
	eta, sigma, mu, gain := c.mat.face(prim)
	rte, rtm := fresnelCoefficients(eta, sigma, mu, gain, c.omega, math.Abs(dn))
	return along(s, rte*e.dotReal(s)).add(along(pout, rtm*e.dotReal(pin))), r
}

// storeWedge records a reflection event (spec §7.1 wedge_events).
func (c *reflCall) storeWedge(ray, depth int, prim int32, hit, n, dir, src vec3, power float64, initial vec3) {
	if !c.opt.CollectWedges || (depth > 0 && !c.opt.CollectWedgePrefixes) {
		return
	}
	if c.opt.CollectWedgePrefixes && c.opt.WedgeSampleStride > 1 {
		stride := uint32(c.opt.WedgeSampleStride)
		ordinal := uint32(ray)*uint32(max(c.maxBounces, 1)) + uint32(depth)
		if ordinal%stride != 0 { // the device seed is 0, so the phase is 0
			return
		}
		power *= float64(stride)
	}
	w := &c.res.Wedges
	slot := int(w.Count)
	w.Count++
	if slot >= w.Capacity {
		return
	}
	w.RayIndex[slot], w.Prim[slot], w.Depth[slot] = int32(ray), prim, int32(depth)
	w.SourcePower[slot] = power
	for k := range 3 {
		w.Hit[3*slot+k], w.Normal[3*slot+k], w.Dir[3*slot+k] = hit[k], n[k], dir[k]
		w.Source[3*slot+k], w.InitialDir[3*slot+k] = src[k], initial[k]
	}
}
