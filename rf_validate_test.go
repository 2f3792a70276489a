package rayd

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/rf"
)

// rfFaces is an rf.Scene of n faces that is never traced: package rf's
// operations called with it on an empty workload only validate.
type rfFaces int

func (n rfFaces) NumFaces() int                                         { return int(n) }
func (rfFaces) Triangle(int) (p0, p1, p2 [3]float32)                    { return }
func (rfFaces) AnyHit(_, _ [3]float32, _, _ float32) bool               { return false }
func (rfFaces) ClosestHit(_, _ [3]float32, _, _ float32) (rf.Hit, bool) { return rf.Hit{}, false }

func validStates() *rf.DfrStates {
	return &rf.DfrStates{
		EdgeIndex: []int32{0, 1}, EdgePos: []float32{0, 0, 1, 0.5, 0, 1}, EdgeDir: []float32{1, 0, 0, 0, 1, 0},
		EdgeTMin: []float32{-1, -1}, EdgeTMax: []float32{1, 1}, N0: []float32{0, 0, 1, 0, 0, 1}, N1: []float32{0, 1, 0, 1, 0, 0},
		Prim0: []int32{0, -1}, Prim1: []int32{1, 0}, ExteriorAngle: []float32{4, 5},
		Src: []float32{0, -2, 2, 1, 1, 2}, SrcPower: []float32{1, 1},
	}
}

// The device paths validate with package rf on an empty workload; every
// rejection is the reference's error, field and message included.
func TestRFDeviceValidationIsTheReference(t *testing.T) {
	const faces = 3
	sc := rfFaces(faces)
	grid := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 3, Res1: 2}
	base := rf.DefaultAccumOptions()
	base.DirectSamples, base.KellerSamples, base.SuffixSamples = 10, 5, 5
	mat := rf.DefaultMaterial(faces)
	type directCase struct {
		st     *rf.DfrStates
		g      rf.DfrGrid
		m      *rf.DfrMaterial
		active []bool
		opt    func(o *rf.AccumOptions)
	}
	short := validStates()
	short.EdgeTMax = short.EdgeTMax[:1]
	badCount := validStates()
	badCount.Count = -1
	for name, c := range map[string]directCase{
		"ok":           {validStates(), grid, mat, nil, func(*rf.AccumOptions) {}},
		"window":       {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.LaneOffset = 21 }},
		"window-count": {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.LaneOffset, o.LaneCount = 10, 11 }},
		"window-neg":   {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.LaneOffset = -1 }},
		"seed":         {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.Seed = -3 }},
		"seed+window":  {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.Seed, o.LaneOffset = -3, 99 }},
		"samples":      {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.KellerSamples = -1 }},
		"total":        {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.DirectSamples, o.SuffixSamples = math.MaxInt32, 1 }},
		"lambda":       {validStates(), grid, nil, nil, func(o *rf.AccumOptions) { o.Wavelength = 0 }},
		"grid-axis":    {validStates(), rf.DfrGrid{Axis: 3, Res0: 1, Res1: 1}, nil, nil, func(*rf.AccumOptions) {}},
		"grid-area":    {validStates(), rf.DfrGrid{Coord0Max: 1, Coord1Max: 1, Res0: 1, Res1: 1, CellArea: -1}, nil, nil, func(*rf.AccumOptions) {}},
		"short":        {short, grid, nil, nil, func(*rf.AccumOptions) {}},
		"count":        {badCount, grid, nil, nil, func(*rf.AccumOptions) {}},
		"nil-states":   {nil, grid, nil, nil, func(*rf.AccumOptions) {}},
		"active":       {validStates(), grid, nil, []bool{true, false, true}, func(*rf.AccumOptions) {}},
		"material":     {validStates(), grid, &rf.DfrMaterial{Gain: []float32{1}}, nil, func(*rf.AccumOptions) {}},
	} {
		o := base
		c.opt(&o)
		_, want := rf.AccumDfrDirect(sc, c.st, c.g, c.m, c.active, o)
		n, got := validateDirect(faces, c.st, c.g, c.m, c.active, o)
		if name == "seed+window" {
			// Both are wrong: the reference reports the window first, the
			// device validation the seed; both are rf validation errors.
			require.Error(t, got)
			continue
		}
		if want == nil {
			require.NoError(t, got, name)
			assert.Equal(t, 20, n, name)
			continue
		}
		require.Error(t, got, name)
		if c.st == nil {
			// Every scene reports missing states with the multi-device
			// contract's phrase (spec §13 row 69), a Type error as rf's.
			require.ErrorContains(t, got, "requires RayD-style DfrStates", name)
			require.ErrorIs(t, got, rf.ErrInvalidArgument, name)
			continue
		}
		assert.Equal(t, want.Error(), got.Error(), name)
	}

	for name, c := range map[string]struct {
		st     *rf.DfrStates
		active []bool
		lo, n  int
	}{
		"ok": {validStates(), nil, 0, -1}, "window": {validStates(), nil, 13, -1}, "count": {validStates(), nil, 2, 11},
		"active": {validStates(), []bool{true, true, true}, 0, -1}, "states": {nil, nil, 0, -1}, "tail": {validStates(), []bool{false}, 5, 7},
	} {
		o := rf.DefaultCoherentOptions()
		o.LaneOffset, o.LaneCount = c.lo, c.n
		want, werr := rf.AccumDfrCoherentDirect(sc, c.st, grid, nil, c.active, o)
		n, err := validateCoherent(faces, c.st, grid, nil, c.active, o)
		if werr != nil {
			require.Error(t, err, name)
			if c.st == nil {
				require.ErrorContains(t, err, "requires RayD-style DfrStates", name)
				continue
			}
			assert.Equal(t, werr.Error(), err.Error(), name)
			continue
		}
		require.NoError(t, err, name)
		var lanes int32
		for i := range want.DirectCount {
			lanes += want.DirectCount[i] + want.VisibilityRejectCount[i] + want.UtdRejectCount[i]
		}
		assert.LessOrEqual(t, int(lanes), n, name)
		assert.Equal(t, map[string]int{"ok": 12, "tail": 7}[name], n, name)
	}

	rays := rf.ReflRays{O: []float32{0, 0, 1, 0, 0, 2}, D: []float32{0, 0, -1, 0, 0, -1}, TxPosition: []float32{0, 0, 1, 0, 0, 2}}
	ag := rf.AccumGrid{Axis: 2, Coord0Max: 1, Coord1Max: 1, Res0: 2, Res1: 2}
	for name, c := range map[string]struct {
		rays rf.ReflRays
		g    rf.AccumGrid
		m    *rf.ReflMaterial
		b    int
		opt  func(o *rf.ReflOptions)
	}{
		"ok":       {rays, ag, mat, 2, func(*rf.ReflOptions) {}},
		"active":   {rf.ReflRays{O: rays.O, D: rays.D, TxPosition: rays.TxPosition, Active: []bool{true}}, ag, nil, 1, func(*rf.ReflOptions) {}},
		"d":        {rf.ReflRays{O: rays.O, D: rays.D[:3], TxPosition: rays.TxPosition}, ag, nil, 1, func(*rf.ReflOptions) {}},
		"bounces":  {rays, ag, nil, -1, func(*rf.ReflOptions) {}},
		"material": {rays, ag, &rf.DfrMaterial{}, 1, func(*rf.ReflOptions) {}},
		"omega":    {rays, ag, nil, 1, func(o *rf.ReflOptions) { o.SolidAnglePerRay = -1 }},
		"stride":   {rays, ag, nil, 1, func(o *rf.ReflOptions) { o.WedgeSampleStride, o.CollectWedges = 0, true }},
		"grid":     {rays, rf.AccumGrid{Axis: 2, Res0: 0, Res1: 1}, nil, 1, func(*rf.ReflOptions) {}},
	} {
		o := rf.DefaultReflOptions()
		c.opt(&o)
		_, want := rf.AccumulateReflections(sc, c.rays, c.g, c.m, c.b, o)
		got := validateReflections(faces, c.rays, c.g, c.m, c.b, o)
		if want == nil {
			assert.NoError(t, got, name)
			continue
		}
		require.Error(t, got, name)
		assert.Equal(t, want.Error(), got.Error(), name)
	}

	tx, rx := []float32{0, 0, 3, 1, 0, 3}, []float32{0, 1, 0}
	for name, c := range map[string]struct {
		tx, rx []float32
		active []bool
		opt    func(o *rf.PathOptions)
	}{
		"ok":        {tx, rx, []bool{true, true}, func(*rf.PathOptions) {}},
		"tx":        {tx[:4], rx, []bool{true, true}, func(*rf.PathOptions) {}},
		"rx":        {tx, rx[:2], []bool{true, true}, func(*rf.PathOptions) {}},
		"active":    {tx, rx, []bool{true}, func(*rf.PathOptions) {}},
		"limit":     {tx, rx, []bool{true}, func(o *rf.PathOptions) { o.MaxPaths = 1 }},
		"limit-neg": {tx, rx, nil, func(o *rf.PathOptions) { o.MaxPaths = -1 }},
		"layout":    {tx, rx, []bool{true, true}, func(o *rf.PathOptions) { o.Layout = 3 }},
		"pol":       {tx, rx, []bool{true, true}, func(o *rf.PathOptions) { o.TxPolarization = []float32{1, 0, 0, 1} }},
		"pol-rows":  {tx, rx, []bool{true, true}, func(o *rf.PathOptions) { o.TxPolarization = make([]float32, 9) }},
		"pol-ok":    {tx, rx, []bool{true, true}, func(o *rf.PathOptions) { o.TxPolarization = make([]float32, 6) }},
		"lambda":    {tx, rx, []bool{true, true}, func(o *rf.PathOptions) { o.Wavelength = math.Inf(1) }},
	} {
		o := rf.DefaultPathOptions()
		c.opt(&o)
		_, want := rf.TraceDfrPaths(sc, c.tx, c.rx, validStates(), nil, c.active, o)
		got := validatePaths(faces, c.tx, c.rx, validStates(), nil, c.active, o)
		if want == nil {
			assert.NoError(t, got, name)
			continue
		}
		require.Error(t, got, name)
		assert.Equal(t, want.Error(), got.Error(), name)
	}
}
