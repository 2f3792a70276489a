package rf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ground(t testing.TB) *TablesScene {
	return sceneOf(t, [9]float32{-10, -10, 0, 10, -10, 0, 10, 10, 0}, [9]float32{-10, -10, 0, 10, 10, 0, -10, 10, 0})
}

func uniformMaterial(n int, eta, sigma float32) *ReflMaterial {
	m := DefaultMaterial(n)
	for i := range n {
		m.EtaR[i], m.Sigma[i] = eta, sigma
	}
	return m
}

func TestLineOfSightCrossing(t *testing.T) {
	const lambda, omega = 0.3, 0.5
	rays := ReflRays{O: []float32{0.1, 0.2, 2}, D: []float32{0.3, 0, -1}, TxPosition: []float32{0.1, 0.2, 2}}
	g := AccumGrid{Axis: 2, Position: 0, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 2, Res1: 2}
	opt := DefaultReflOptions()
	opt.Wavelength, opt.SolidAnglePerRay, opt.IncludeLOS = lambda, omega, true
	r, err := AccumulateReflections(nil, rays, g, nil, 0, opt)
	require.NoError(t, err)
	require.Equal(t, int32(1), r.ReflectionCount)
	f := func(x float32) float64 { return float64(x) } // inputs are float32
	o := vec3{f(0.1), f(0.2), 2}
	dn := vec3{f(0.3), 0, -1}.normalize()
	// Crossing near (0.7, 0.2): cell (1, 1) = 3. |Ec|² = (λ/4π)²·Ω/A/|d_z|
	// whatever the distance.
	wantPower := sq(lambda/(4*math.Pi)) * omega / 1 / math.Abs(dn[2])
	assert.InDelta(t, wantPower, r.Power[3], 1e-15)
	// The crossing parameter divides by d_axis pushed away from 0 by 1e-6;
	// the plane point then takes the exact plane coordinate.
	x := o.add(dn.scale(-2 / (dn[2] - 1e-6)))
	D := vec3{x[0], x[1], 0}.sub(o).norm()
	// The field is the transverse part of x̂, times e^{−ikD}.
	pol := vec3{1, 0, 0}.sub(dn.scale(dn[0])).normalize()
	amp := math.Sqrt(wantPower)
	ph := -2 * math.Pi / lambda * D
	assert.InDelta(t, amp*pol[0]*math.Cos(ph), r.FieldXRe[3], 1e-12)
	assert.InDelta(t, amp*pol[0]*math.Sin(ph), r.FieldXIm[3], 1e-12)
	assert.InDelta(t, amp*pol[2]*math.Cos(ph), r.FieldZRe[3], 1e-12)
	assert.Zero(t, r.FieldYRe[3])
	assert.Equal(t, 1, r.RayCount)
	// Without IncludeLOS nothing is accumulated at depth 0.
	opt.IncludeLOS = false
	r, err = AccumulateReflections(nil, rays, g, nil, 0, opt)
	require.NoError(t, err)
	assert.Zero(t, r.ReflectionCount)
}

func TestConductorReflection(t *testing.T) {
	sc := ground(t)
	o, d := vec3{0, 0, 1}, vec3{0.5, 0, -1}
	rays := ReflRays{O: []float32{0, 0, 1}, D: []float32{0.5, 0, -1}, TxPosition: []float32{0, 0, 1}, TxPolarization: []float32{0, 1, 0}}
	g := AccumGrid{Axis: 2, Position: 0.5, Coord0Min: 0, Coord0Max: 2, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 1}
	r, err := AccumulateReflections(sc, rays, g, uniformMaterial(2, 1, 1e12), 1, DefaultReflOptions())
	require.NoError(t, err)
	require.Equal(t, int32(1), r.ReflectionCount)
	// The reflected ray rises through z = 0.5 at x = 0.75 (cell 1); the
	// unfolded length is measured from the image (0, 0, −1).
	D := vec3{0.75, 0, 0.5}.sub(vec3{0, 0, -1}).norm()
	a := math.Abs(d.normalize()[2])
	amp := math.Sqrt(sq(1/(4*math.Pi)) / (2 * 2 / 4) / a)
	// A perfect conductor flips the TE (here ŷ) component: r_te → −1.
	// r_te = −1 + O(1/√σ) for a finite conductivity.
	assert.InDelta(t, -amp*math.Cos(-2*math.Pi*D), r.FieldYRe[1], 1e-4*amp)
	assert.InDelta(t, -amp*math.Sin(-2*math.Pi*D), r.FieldYIm[1], 1e-4*amp)
	assert.InDelta(t, amp*amp, r.Power[1], 1e-5*amp*amp)
	_ = o
	// The default material (η = 1) reflects nothing.
	r, err = AccumulateReflections(sc, rays, g, nil, 1, DefaultReflOptions())
	require.NoError(t, err)
	assert.Zero(t, r.ReflectionCount)
	// An invalid face ends the chain too.
	m := uniformMaterial(2, 1, 1e12)
	m.Valid[0], m.Valid[1] = false, false
	r, err = AccumulateReflections(sc, rays, g, m, 1, DefaultReflOptions())
	require.NoError(t, err)
	assert.Zero(t, r.ReflectionCount)
}

func TestBrewsterAngle(t *testing.T) {
	// tan θ_B = √ε = 2: the TM (in-plane) wave is not reflected.
	sc := ground(t)
	g := AccumGrid{Axis: 2, Position: 0.5, Coord0Min: -5, Coord0Max: 5, Coord1Min: -5, Coord1Max: 5, Res0: 1, Res1: 1}
	m := uniformMaterial(2, 4, 0)
	tm := ReflRays{O: []float32{0, 0, 1}, D: []float32{2, 0, -1}, TxPosition: []float32{0, 0, 1}}
	r, err := AccumulateReflections(sc, tm, g, m, 1, DefaultReflOptions())
	require.NoError(t, err)
	assert.Zero(t, r.ReflectionCount)
	te := tm
	te.TxPolarization = []float32{0, 1, 0}
	r, err = AccumulateReflections(sc, te, g, m, 1, DefaultReflOptions())
	require.NoError(t, err)
	assert.Equal(t, int32(1), r.ReflectionCount)
	// r_te = (c − √(ε − s²))/(c + √(ε − s²)) at c = 1/√5.
	c := 1 / math.Sqrt(5)
	rte := (c - math.Sqrt(4-0.8)) / (c + math.Sqrt(4-0.8))
	a := 1 / math.Sqrt(5)
	assert.InDelta(t, rte*rte*sq(1/(4*math.Pi))/100/a, r.Power[0], 1e-12)
}

func TestPlaneCrossingRule(t *testing.T) {
	sc := ground(t)
	g := AccumGrid{Axis: 2, Position: -0.5, Coord0Min: -5, Coord0Max: 5, Coord1Min: -5, Coord1Max: 5, Res0: 1, Res1: 1}
	opt := DefaultReflOptions()
	opt.IncludeLOS = true
	// The plane lies behind the ground: blocked before the crossing.
	rays := ReflRays{O: []float32{0, 0, 1}, D: []float32{0, 0, -1}, TxPosition: []float32{0, 0, 1}}
	r, err := AccumulateReflections(sc, rays, g, nil, 0, opt)
	require.NoError(t, err)
	assert.Zero(t, r.ReflectionCount)
	// Without the ground the crossing at t = 1.5 counts; a ray leaving the
	// plane behind it (t < 0) does not.
	r, err = AccumulateReflections(nil, rays, g, nil, 0, opt)
	require.NoError(t, err)
	assert.Equal(t, int32(1), r.ReflectionCount)
	up := ReflRays{O: []float32{0, 0, 1}, D: []float32{0, 0, 1}, TxPosition: []float32{0, 0, 1}}
	r, err = AccumulateReflections(nil, up, g, nil, 0, opt)
	require.NoError(t, err)
	assert.Zero(t, r.ReflectionCount)
	// A ray parallel to the plane never crosses it.
	flat := ReflRays{O: []float32{0, 0, 1}, D: []float32{1, 0, 0}, TxPosition: []float32{0, 0, 1}}
	r, err = AccumulateReflections(nil, flat, g, nil, 0, opt)
	require.NoError(t, err)
	assert.Zero(t, r.ReflectionCount)
}

// fanRays are n rays from (0, 0, 1) spread over the lower hemisphere.
func fanRays(n int) ReflRays {
	var r ReflRays
	for i := range n {
		az := 2 * math.Pi * float64(i) / float64(n)
		el := 0.2 + 1.2*float64(i%7)/7
		r.O = append(r.O, 0, 0, 1)
		r.D = append(r.D, float32(math.Cos(az)*math.Cos(el)), float32(math.Sin(az)*math.Cos(el)), float32(-math.Sin(el)))
		r.TxPosition = append(r.TxPosition, 0, 0, 1)
	}
	return r
}

func TestReflectionRowWindowsMerge(t *testing.T) {
	sc := ground(t)
	rays := fanRays(100)
	rays.Active = make([]bool, 100)
	for i := range rays.Active {
		rays.Active[i] = i%9 != 0
	}
	g := AccumGrid{Axis: 2, Position: 0.5, Coord0Min: -3, Coord0Max: 3, Coord1Min: -3, Coord1Max: 3, Res0: 6, Res1: 5}
	m := uniformMaterial(2, 5, 0.05)
	full, err := AccumulateReflections(sc, rays, g, m, 2, DefaultReflOptions())
	require.NoError(t, err)
	require.Positive(t, full.ReflectionCount)
	slice := func(lo, hi int) ReflRays {
		return ReflRays{O: rays.O[3*lo : 3*hi], D: rays.D[3*lo : 3*hi], TxPosition: rays.TxPosition[3*lo : 3*hi], Active: rays.Active[lo:hi]}
	}
	merged, err := AccumulateReflections(sc, slice(0, 32), g, m, 2, DefaultReflOptions())
	require.NoError(t, err)
	for _, w := range [][2]int{{32, 37}, {37, 100}} {
		part, err := AccumulateReflections(sc, slice(w[0], w[1]), g, m, 2, DefaultReflOptions())
		require.NoError(t, err)
		require.NoError(t, merged.Add(part))
	}
	assert.Equal(t, full.ReflectionCount, merged.ReflectionCount)
	assert.Equal(t, full.RayCount, merged.RayCount)
	mg := merged.grids()
	for k, grid := range full.grids() {
		relClose(t, grid, mg[k], 1e-12, 1e-300, "grid")
	}
	other, err := AccumulateReflections(sc, slice(0, 1), g, m, 3, DefaultReflOptions())
	require.NoError(t, err)
	require.Error(t, merged.Add(other))
}

func TestWedgeEvents(t *testing.T) {
	sc := ground(t)
	rays := fanRays(5)
	g := AccumGrid{Axis: 2, Position: 0.5, Coord0Min: -3, Coord0Max: 3, Coord1Min: -3, Coord1Max: 3, Res0: 2, Res1: 2}
	opt := DefaultReflOptions()
	opt.CollectWedges, opt.WedgeCapacity = true, 3
	r, err := AccumulateReflections(sc, rays, g, uniformMaterial(2, 1, 1e12), 2, opt)
	require.NoError(t, err)
	assert.Equal(t, int32(5), r.Wedges.Count) // one ground hit per ray, only depth 0 kept
	assert.Equal(t, []int32{0, 1, 2}, r.Wedges.RayIndex)
	assert.Equal(t, []int32{0, 0, 0}, r.Wedges.Depth)
	assert.InDelta(t, 1.0, r.Wedges.SourcePower[0], 1e-12) // |E|²·Ω
	assert.InDelta(t, 1.0, r.Wedges.Normal[2], 1e-12)      // facing the incoming ray
	assert.Equal(t, []float64{0, 0, 1}, r.Wedges.Source[0:3])
	require.Error(t, r.Add(r))
	opt.WedgeCapacity = 1
	r, err = AccumulateReflections(sc, rays, g, uniformMaterial(2, 1, 1e12), 2, opt)
	require.NoError(t, err)
	assert.Equal(t, int32(5), r.Wedges.Count)
	assert.Len(t, r.Wedges.RayIndex, 1)
}
