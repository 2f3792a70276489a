package rf

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cloneStates deep-copies the float32 fields that the VJP differentiates.
func cloneStates(s *DfrStates) *DfrStates {
	c := *s
	for _, p := range []*[]float32{&c.EdgePos, &c.EdgeDir, &c.EdgeTMin, &c.EdgeTMax, &c.ExteriorAngle, &c.Src, &c.SrcPower} {
		*p = append([]float32(nil), (*p)...)
	}
	return &c
}

// fdCheck compares AccumDfrDirectVJP with central differences of the loss
// Σ gp·Power + gf·FieldXRe over every differentiable input.
func fdCheck(t *testing.T, sc Scene, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, o AccumOptions, gp, gf []float64, only ...string) {
	t.Helper()
	loss := func(s *DfrStates, mm *DfrMaterial) float64 {
		r, err := AccumDfrDirect(sc, s, g, mm, active, o)
		require.NoError(t, err)
		l := 0.0
		for c := range r.Power {
			l += gp[c]*r.Power[c] + gf[c]*r.FieldXRe[c]
		}
		return l
	}
	grads, err := AccumDfrDirectVJP(sc, st, g, m, active, o, gp, gf)
	require.NoError(t, err)
	type param struct {
		name  string
		field func(*DfrStates, *DfrMaterial) []float32
		grad  []float64
	}
	params := []param{
		{"edge_pos", func(s *DfrStates, _ *DfrMaterial) []float32 { return s.EdgePos }, grads.EdgePos},
		{"edge_dir", func(s *DfrStates, _ *DfrMaterial) []float32 { return s.EdgeDir }, grads.EdgeDir},
		{"edge_t_min", func(s *DfrStates, _ *DfrMaterial) []float32 { return s.EdgeTMin }, grads.EdgeTMin},
		{"edge_t_max", func(s *DfrStates, _ *DfrMaterial) []float32 { return s.EdgeTMax }, grads.EdgeTMax},
		{"exterior_angle", func(s *DfrStates, _ *DfrMaterial) []float32 { return s.ExteriorAngle }, grads.ExteriorAngle},
		{"src", func(s *DfrStates, _ *DfrMaterial) []float32 { return s.Src }, grads.Src},
		{"src_power", func(s *DfrStates, _ *DfrMaterial) []float32 { return s.SrcPower }, grads.SrcPower},
	}
	if m != nil {
		params = append(params, param{"material.gain", func(_ *DfrStates, mm *DfrMaterial) []float32 { return mm.Gain }, grads.MaterialGain})
	}
	scale := 0.0
	for _, p := range params {
		for _, v := range p.grad {
			scale = math.Max(scale, math.Abs(v))
		}
	}
	require.Positive(t, scale)
	checked := 0
	for _, p := range params {
		if len(only) > 0 && !slices.Contains(only, p.name) {
			continue
		}
		for i := range p.grad {
			s1, s2 := cloneStates(st), cloneStates(st)
			var m1, m2 *DfrMaterial
			if m != nil {
				c1, c2 := *m, *m
				c1.Gain, c2.Gain = append([]float32(nil), m.Gain...), append([]float32(nil), m.Gain...)
				m1, m2 = &c1, &c2
			}
			x := p.field(s1, m1)[i]
			h := float32(1e-3 * math.Max(math.Abs(float64(x)), 0.5))
			p.field(s1, m1)[i] = x + h
			p.field(s2, m2)[i] = x - h
			fd := (loss(s1, m1) - loss(s2, m2)) / (float64(x+h) - float64(x-h))
			tol := 1e-3*math.Max(math.Abs(fd), math.Abs(p.grad[i])) + 1e-6*scale
			assert.LessOrEqualf(t, math.Abs(fd-p.grad[i]), tol, "%s[%d]: vjp %v, finite difference %v", p.name, i, p.grad[i], fd)
			checked++
		}
	}
	assert.Equal(t, make([]float64, len(grads.Wi)), grads.Wi)
	t.Logf("checked %d gradients (largest %.3g)", checked, scale)
}

// Lane by lane, in float64: every committed lane's dual derivatives match
// central differences of its contribution with respect to each geometric
// and scalar input, for direct, Keller and suffix lanes alike. A lane whose
// discrete choices change under the perturbation is skipped.
func TestVJPLaneDerivativesMatchFiniteDifferences(t *testing.T) {
	sc, st, g, m := richFixture(t)
	c, err := newDirectCall("t", sc, st, g, m, nil, richOptions())
	require.NoError(t, err)
	base := append([]state(nil), c.states...)
	slot := func(s *state, p int) *float64 {
		switch {
		case p < pEdgeDir:
			return &s.pos[p-pEdgePos]
		case p < pTMin:
			return &s.dir[p-pEdgeDir]
		case p == pTMin:
			return &s.tmin
		case p == pTMax:
			return &s.tmax
		case p == pExt:
			return &s.ext
		case p < pPower:
			return &s.src[p-pSrc]
		}
		return &s.power
	}
	checked, skipped := map[LaneKind]int{}, 0
	for l := range 650 {
		ln := c.lane(uint32(l))
		if ln.outcome != outCommit {
			continue
		}
		d := c.laneDual(ln)
		for p := 0; p <= pPower; p++ {
			x := *slot(&base[ln.s], p)
			h := 1e-6 * math.Max(math.Abs(x), 1)
			var vals [2]float64
			same := true
			for k, sign := range []float64{1, -1} {
				c.states = append([]state(nil), base...)
				*slot(&c.states[ln.s], p) = x + sign*h
				lp := c.lane(uint32(l))
				same = same && lp.outcome == outCommit && lp.cell == ln.cell && lp.face == ln.face
				vals[k] = lp.c
			}
			c.states = base
			if !same {
				skipped++
				continue
			}
			fd := (vals[0] - vals[1]) / (2 * h)
			tol := 1e-3*math.Max(math.Abs(fd), math.Abs(d.d[p])) + 1e-9*ln.c
			require.LessOrEqualf(t, math.Abs(fd-d.d[p]), tol, "lane %d (%v) slot %d: dual %v, difference %v", l, ln.kind, p, d.d[p], fd)
			checked[ln.kind]++
		}
	}
	t.Logf("checked %v, skipped %d", checked, skipped)
	for _, k := range []LaneKind{LaneDirect, LaneKeller, LaneSuffix} {
		assert.Greater(t, checked[k], 500, k.String())
	}
	assert.Less(t, skipped, 20)
}

func TestVJPMatchesFiniteDifferencesPerCell(t *testing.T) {
	sc, st, g, m := richFixture(t)
	o := richOptions()
	o.KellerSamples, o.SuffixSamples = 0, 0
	gp, gf := make([]float64, g.Cells()), make([]float64, g.Cells())
	for c := range gp {
		gp[c], gf[c] = math.Sin(float64(c)+0.3), 0.01*math.Cos(float64(2*c))
	}
	fdCheck(t, sc, st, g, m, nil, o, gp, gf)
	// The default material differentiates the same inputs (no gain rows).
	fdCheck(t, sc, st, g, nil, nil, o, gp, gf)
	// With Keller and suffix lanes, the inputs that move no geometry (so
	// no lane changes fate): the suffix face gain enters squared.
	fdCheck(t, sc, st, g, m, nil, richOptions(), gp, gf, "material.gain", "src_power")
}

func TestVJPWindowsAndConsistency(t *testing.T) {
	sc, st, g, m := richFixture(t)
	gp, gf := make([]float64, g.Cells()), make([]float64, g.Cells())
	for c := range gp {
		gp[c], gf[c] = float64(c%3)-0.5, 0.1
	}
	full, err := AccumDfrDirectVJP(sc, st, g, m, nil, richOptions(), gp, gf)
	require.NoError(t, err)
	sumG := &DfrGrads{}
	for _, w := range [][2]int{{0, 64}, {64, 269}, {333, -1}} {
		o := richOptions()
		o.LaneOffset, o.LaneCount = w[0], w[1]
		part, err := AccumDfrDirectVJP(sc, st, g, m, nil, o, gp, gf)
		require.NoError(t, err)
		if sumG.EdgePos == nil {
			sumG = part
			continue
		}
		for k, v := range [][]float64{part.EdgePos, part.EdgeDir, part.EdgeTMin, part.EdgeTMax, part.ExteriorAngle, part.Src, part.SrcPower, part.MaterialGain} {
			dst := [][]float64{sumG.EdgePos, sumG.EdgeDir, sumG.EdgeTMin, sumG.EdgeTMax, sumG.ExteriorAngle, sumG.Src, sumG.SrcPower, sumG.MaterialGain}[k]
			for i := range v {
				dst[i] += v[i]
			}
		}
	}
	relClose(t, full.EdgePos, sumG.EdgePos, 1e-12, 1e-300, "edge_pos")
	relClose(t, full.MaterialGain, sumG.MaterialGain, 1e-12, 1e-300, "gain")
	// The dual replay reproduces the forward contribution of every lane.
	c, err := newDirectCall("t", sc, st, g, m, nil, richOptions())
	require.NoError(t, err)
	for l := range 650 {
		ln := c.lane(uint32(l))
		if ln.outcome == outCommit {
			require.InDelta(t, ln.c, c.laneDual(ln).v, 1e-12*ln.c, fmt.Sprintf("lane %d (%v)", l, ln.kind))
		}
	}
}

func TestVJPClamps(t *testing.T) {
	sc, st, g := benchFixture(t)
	gp := make([]float64, 16)
	for c := range gp {
		gp[c] = 1
	}
	st = cloneStates(st)
	st.ExteriorAngle[0] = 0.5 // below π/4: clamped, no gradient
	st.ExteriorAngle[1] = 13  // above 4π: clamped, no gradient
	m := DefaultMaterial(1)
	m.Gain[0] = -1 // a negative gain is clamped to 0: nothing commits
	r, err := AccumDfrDirectVJP(sc, st, g, m, nil, benchOptions(256), gp, nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{0}, r.MaterialGain)
	m.Gain[0] = 1
	r, err = AccumDfrDirectVJP(sc, st, g, m, nil, benchOptions(256), gp, nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0}, r.ExteriorAngle)
	assert.Positive(t, r.MaterialGain[0])
	assert.Positive(t, r.SrcPower[0])
	_, err = AccumDfrDirectVJP(sc, st, g, m, nil, benchOptions(256), gp[:3], nil)
	assert.ErrorIs(t, err, ErrLength)
}
