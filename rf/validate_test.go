package rf

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type badCase struct {
	name  string
	run   func() error
	kind  error
	field string
}

func checkBad(t *testing.T, op string, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		err := c.run()
		require.Errorf(t, err, c.name)
		assert.ErrorIsf(t, err, c.kind, c.name)
		if c.kind != ErrLength {
			assert.ErrorIsf(t, err, ErrInvalidArgument, c.name)
		} else {
			assert.NotErrorIsf(t, err, ErrInvalidArgument, c.name)
		}
		var ve *ValidationError
		require.Truef(t, errors.As(err, &ve), c.name)
		assert.Equalf(t, c.field, ve.Field, c.name)
		assert.Equalf(t, op, ve.Op, c.name)
		assert.Containsf(t, err.Error(), "rf: "+op+": "+c.field, c.name)
	}
}

func TestAccumDfrDirectValidation(t *testing.T) {
	sc, st, g := benchFixture(t)
	run := func(mut func(*DfrStates, *DfrGrid, *AccumOptions) ([]bool, *DfrMaterial)) func() error {
		return func() error {
			s, gg, o := *st, g, benchOptions(64)
			active, m := mut(&s, &gg, &o)
			_, err := AccumDfrDirect(sc, &s, gg, m, active, o)
			return err
		}
	}
	type mutFn = func(*DfrStates, *DfrGrid, *AccumOptions) ([]bool, *DfrMaterial)
	c := func(name string, kind error, field string, f mutFn) badCase {
		return badCase{name, run(f), kind, field}
	}
	checkBad(t, "accum_dfr_direct", []badCase{
		c("negative count", ErrStateCount, "states.count", func(s *DfrStates, _ *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			s.Count = -1
			return nil, nil
		}),
		c("count over rows", ErrStateCount, "states.count", func(s *DfrStates, _ *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			s.Count = 3
			return nil, nil
		}),
		c("axis", ErrGrid, "grid.axis", func(_ *DfrStates, g *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) { g.Axis = 3; return nil, nil }),
		c("bounds", ErrGrid, "grid.coord0", func(_ *DfrStates, g *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			g.Coord0Max = g.Coord0Min
			return nil, nil
		}),
		c("nan bounds", ErrGrid, "grid.coord1", func(_ *DfrStates, g *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			g.Coord1Min = math.NaN()
			return nil, nil
		}),
		c("res0", ErrGrid, "grid.resolution0", func(_ *DfrStates, g *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) { g.Res0 = 0; return nil, nil }),
		c("res1", ErrGrid, "grid.resolution1", func(_ *DfrStates, g *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) { g.Res1 = -2; return nil, nil }),
		c("cells", ErrGrid, "grid.resolution", func(_ *DfrStates, g *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			g.Res0, g.Res1 = 1<<16, 1<<16
			return nil, nil
		}),
		c("cell area", ErrGrid, "grid.cell_area", func(_ *DfrStates, g *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			g.CellArea = -1
			return nil, nil
		}),
		c("wavelength", ErrInvalidArgument, "wavelength", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.Wavelength = 0
			return nil, nil
		}),
		c("inf wavelength", ErrInvalidArgument, "wavelength", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.Wavelength = math.Inf(1)
			return nil, nil
		}),
		c("keller", ErrInvalidArgument, "keller_samples", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.KellerSamples = -1
			return nil, nil
		}),
		c("total", ErrCapacity, "total_samples", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.DirectSamples, o.SuffixSamples = math.MaxInt32, 1
			return nil, nil
		}),
		c("pos rows", ErrLength, "states.edge_pos", func(s *DfrStates, _ *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			s.EdgePos = s.EdgePos[:3]
			return nil, nil
		}),
		c("pos stride", ErrLength, "states.edge_pos", func(s *DfrStates, _ *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			s.EdgePos = s.EdgePos[:5]
			return nil, nil
		}),
		c("power", ErrLength, "states.src_power", func(s *DfrStates, _ *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			s.SrcPower = s.SrcPower[:1]
			return nil, nil
		}),
		c("wi", ErrLength, "states.wi", func(s *DfrStates, _ *DfrGrid, _ *AccumOptions) ([]bool, *DfrMaterial) {
			s.Wi = []float32{1, 0, 0}
			return nil, nil
		}),
		c("active", ErrLength, "active", func(*DfrStates, *DfrGrid, *AccumOptions) ([]bool, *DfrMaterial) {
			return []bool{true, true, true}, nil
		}),
		c("empty material", ErrLength, "material", func(*DfrStates, *DfrGrid, *AccumOptions) ([]bool, *DfrMaterial) {
			return nil, &DfrMaterial{}
		}),
		c("material widths", ErrLength, "material.valid", func(*DfrStates, *DfrGrid, *AccumOptions) ([]bool, *DfrMaterial) {
			m := DefaultMaterial(2)
			m.Valid = m.Valid[:1]
			return nil, m
		}),
		c("offset", ErrLaneWindow, "lane_offset", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.LaneOffset = -1
			return nil, nil
		}),
		c("past end", ErrLaneWindow, "lane_offset", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.LaneOffset = 65
			return nil, nil
		}),
		c("count", ErrLaneWindow, "lane_count", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.LaneOffset, o.LaneCount = 16, 49
			return nil, nil
		}),
		c("seed", ErrInvalidArgument, "seed", func(_ *DfrStates, _ *DfrGrid, o *AccumOptions) ([]bool, *DfrMaterial) {
			o.Seed = -3
			return nil, nil
		}),
	})
	_, err := AccumDfrDirect(sc, nil, g, nil, nil, benchOptions(4))
	assert.ErrorIs(t, err, ErrInvalidArgument)
	_, err = AccumDfrDirect(sc, st, g, nil, nil, AccumOptions{})
	assert.ErrorIs(t, err, ErrInvalidArgument) // the zero value has no wavelength
}

func TestCoherentValidation(t *testing.T) {
	sc, st, g := benchFixture(t)
	big := g
	big.Res0, big.Res1 = 1<<15, 1<<15
	opt := DefaultCoherentOptions()
	bad := opt
	bad.LaneOffset, bad.LaneCount = 30, 3
	checkBad(t, "accum_dfr_coherent_direct", []badCase{
		{"lanes", func() error { _, err := AccumDfrCoherentDirect(sc, st, big, nil, nil, opt); return err }, ErrCapacity, "total_lane_count"},
		{"window", func() error { _, err := AccumDfrCoherentDirect(sc, st, g, nil, nil, bad); return err }, ErrLaneWindow, "lane_count"},
		{"active", func() error {
			_, err := AccumDfrCoherentDirect(sc, st, g, nil, []bool{true, true, false}, opt)
			return err
		}, ErrLength, "active"},
		{"wavelength", func() error {
			o := opt
			o.Wavelength = -1
			_, err := AccumDfrCoherentDirect(sc, st, g, nil, nil, o)
			return err
		}, ErrInvalidArgument, "wavelength"},
	})
}

func TestReflectionValidation(t *testing.T) {
	sc := ground(t)
	g := AccumGrid{Axis: 2, Res0: 1, Res1: 1, Coord0Max: 1, Coord1Max: 1}
	rays := ReflRays{O: []float32{0, 0, 1}, D: []float32{0, 0, -1}, TxPosition: []float32{0, 0, 1}}
	run := func(r ReflRays, g AccumGrid, m *ReflMaterial, b int, mut func(*ReflOptions)) func() error {
		return func() error {
			o := DefaultReflOptions()
			if mut != nil {
				mut(&o)
			}
			_, err := AccumulateReflections(sc, r, g, m, b, o)
			return err
		}
	}
	with := func(f func(*ReflRays)) ReflRays { r := rays; f(&r); return r }
	checkBad(t, "accumulate_reflections", []badCase{
		{"o", run(with(func(r *ReflRays) { r.O = r.O[:2] }), g, nil, 1, nil), ErrLength, "ray.o"},
		{"d", run(with(func(r *ReflRays) { r.D = nil }), g, nil, 1, nil), ErrLength, "ray.d"},
		{"tmax", run(with(func(r *ReflRays) { r.TMax = []float32{1, 2} }), g, nil, 1, nil), ErrLength, "ray.tmax"},
		{"tx", run(with(func(r *ReflRays) { r.TxPosition = nil }), g, nil, 1, nil), ErrLength, "tx_position"},
		{"pol", run(with(func(r *ReflRays) { r.TxPolarization = []float32{1} }), g, nil, 1, nil), ErrLength, "tx_polarization"},
		{"active", run(with(func(r *ReflRays) { r.Active = []bool{true, true} }), g, nil, 1, nil), ErrLength, "active"},
		{"bounces", run(rays, g, nil, -1, nil), ErrInvalidArgument, "max_bounces"},
		{"axis", run(rays, AccumGrid{Axis: -1, Res0: 1, Res1: 1}, nil, 1, nil), ErrGrid, "grid.axis"},
		{"res", run(rays, AccumGrid{Res0: 1}, nil, 1, nil), ErrGrid, "grid.resolution1"},
		{"wavelength", run(rays, g, nil, 1, func(o *ReflOptions) { o.Wavelength = math.NaN() }), ErrInvalidArgument, "wavelength"},
		{"omega", run(rays, g, nil, 1, func(o *ReflOptions) { o.SolidAnglePerRay = -1 }), ErrInvalidArgument, "solid_angle_per_ray"},
		{"capacity", run(rays, g, nil, 1, func(o *ReflOptions) { o.WedgeCapacity = -1 }), ErrInvalidArgument, "wedge_capacity"},
		{"stride", run(rays, g, nil, 1, func(o *ReflOptions) { o.WedgeSampleStride = 0 }), ErrInvalidArgument, "wedge_sample_stride"},
		{"strategy", run(rays, g, nil, 1, func(o *ReflOptions) { o.AccumulationStrategy = 5 }), ErrInvalidArgument, "accumulation_strategy"},
		{"thresholds", run(rays, g, nil, 1, func(o *ReflOptions) { o.ProceduralSampleCount = -1 }), ErrInvalidArgument, "accumulation_thresholds"},
		{"material", run(rays, g, DefaultMaterial(3), 1, nil), ErrLength, "material"},
	})
	// An empty batch is valid; the reflection grid does not require ordered
	// bounds (nothing can be accumulated on an empty span).
	r, err := AccumulateReflections(sc, ReflRays{}, AccumGrid{Res0: 2, Res1: 3}, nil, 2, DefaultReflOptions())
	require.NoError(t, err)
	assert.Len(t, r.Power, 6)
}

func TestTraceDfrPathsValidation(t *testing.T) {
	sc, st, m, rx := screenFixture(t)
	on := []bool{true, true}
	run := func(tx, rx []float32, s *DfrStates, mm *DfrMaterial, active []bool, mut func(*PathOptions)) func() error {
		return func() error {
			o := DefaultPathOptions()
			if mut != nil {
				mut(&o)
			}
			_, err := TraceDfrPaths(sc, tx, rx, s, mm, active, o)
			return err
		}
	}
	short := *st
	short.N1 = short.N1[:3]
	huge := make([]float32, 3*50000)
	checkBad(t, "trace_dfr_paths", []badCase{
		{"tx", run(txTwo[:4], rx, st, m, on, nil), ErrLength, "tx_positions"},
		{"rx", run(txTwo, rx[:2], st, m, on, nil), ErrLength, "rx_positions"},
		{"max paths", run(txTwo, rx, st, m, on, func(o *PathOptions) { o.MaxPaths = -1 }), ErrStateCount, "max_paths"},
		{"wavelength", run(txTwo, rx, st, m, on, func(o *PathOptions) { o.Wavelength = 0 }), ErrInvalidArgument, "wavelength"},
		{"layout", run(txTwo, rx, st, m, on, func(o *PathOptions) { o.Layout = 2 }), ErrInvalidArgument, "layout"},
		{"pol", run(txTwo, rx, st, m, on, func(o *PathOptions) { o.TxPolarization = make([]float32, 9) }), ErrLength, "tx_polarization"},
		{"states", run(txTwo, rx, &short, m, on, nil), ErrLength, "states.n1"},
		{"active", run(txTwo, rx, st, m, on[:1], nil), ErrLength, "active"},
		{"material", run(txTwo, rx, st, &DfrMaterial{Gain: []float32{1}}, on, nil), ErrLength, "material.eta_r"},
		{"capacity", run(huge, huge, st, m, on, nil), ErrCapacity, "capacity"},
	})
}
