package rayd

import (
	"context"

	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// RF operations (spec §6–§7). Inputs are validated once, here, by
// package rf's rules on an empty workload (the same *rf.ValidationError,
// field and message, on every backend); then the scene's engine runs the
// operation: package rf's float64 reference on the CPU backend, the device
// kernels of package accel over a BVH on a CUDA scene (an OptiX scene
// builds one on first use), and the replicated layer on a multi-device
// scene — lane windows or warp-aligned row windows summed on the master in
// device order, transmitter blocks for paths.

// AccumDfrDirect is accum_dfr_direct (spec §6.2): the order-1 Monte-Carlo
// diffraction accumulation of states onto grid over the lane window of opt
// (direct, Keller-cone and reflection-suffix samples). m nil is the default
// material; active is empty, one broadcast flag or one flag per state. Lane
// windows that partition the lane space sum (AccumResult.Add) to the full
// call: counters exactly, grids up to float32 summation order.
func (s *Scene) AccumDfrDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool,
	opt rf.AccumOptions) (*rf.AccumResult, error) {
	n, err := validateDirect(s.tables.NumFaces(), st, g, m, active, opt)
	if err != nil {
		return nil, err
	}
	opt.LaneCount = n
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.AccumDfrDirect(ctx, st, g, m, active, opt)
}

// AccumDfrCoherentDirect is accum_dfr_coherent_direct (spec §6.4): the
// deterministic coherent first-order accumulation over the S·C lanes (state
// g mod S, cell g div S) of the window of opt. Phases are evaluated in
// float64 on both backends.
func (s *Scene) AccumDfrCoherentDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial,
	active []bool, opt rf.CoherentOptions) (*rf.CoherentResult, error) {
	n, err := validateCoherent(s.tables.NumFaces(), st, g, m, active, opt)
	if err != nil {
		return nil, err
	}
	opt.LaneCount = n
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.AccumDfrCoherentDirect(ctx, st, g, m, active, opt)
}

// AccumulateReflections is accumulate_reflections (spec §7.1): every active
// ray follows its specular chain for up to maxBounces Fresnel reflections
// (m: one row per scene face; nil is the default material, which reflects
// nothing) and each grid-plane crossing adds its complex field and power to
// the crossed cell. With opt.CollectWedges the reflection events are
// returned too (in device order on the CUDA backend).
func (s *Scene) AccumulateReflections(ctx context.Context, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial,
	maxBounces int, opt rf.ReflOptions) (*rf.ReflResult, error) {
	if err := validateReflections(s.tables.NumFaces(), rays, g, m, maxBounces, opt); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.AccumulateReflections(ctx, rays, g, m, maxBounces, opt)
}

// TraceDfrPaths is trace_dfr_paths (spec §7.2): the first-order diffraction
// path, with its UTD field, of every (transmitter, receiver, state) lane;
// active is required (one flag per state of the limit min(S, MaxPaths)).
// Compact rows come in device order on the CUDA backend; SourceLane rows
// sit at ((tx·R + rx)·M + s) on both. A replicated scene requires
// opt.Layout = rf.SourceLane.
func (s *Scene) TraceDfrPaths(ctx context.Context, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool,
	opt rf.PathOptions) (*rf.DfrPaths, error) {
	if err := validatePaths(s.tables.NumFaces(), tx, rx, st, m, active, opt); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.TraceDfrPaths(ctx, tx, rx, st, m, active, opt)
}

// validateDirect runs rf's validation of accum_dfr_direct (after the
// contract's check that states and grid are present, spec §13 row 69) and
// returns the window's lane count.
func validateDirect(faces int, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.AccumOptions) (int, error) {
	if err := shard.RequireDfrInputs(shard.OpAccumDfrDirect, st, g); err != nil {
		return 0, err
	}
	return rf.ValidateAccumDfrDirect(faces, st, g, m, active, opt)
}

// validateCoherent runs rf's validation of accum_dfr_coherent_direct and
// returns the window's lane count.
func validateCoherent(faces int, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.CoherentOptions) (int, error) {
	if err := shard.RequireDfrInputs(shard.OpAccumDfrCoherentDirect, st, g); err != nil {
		return 0, err
	}
	return rf.ValidateAccumDfrCoherentDirect(faces, st, g, m, active, opt)
}

// validateReflections runs rf's validation of accumulate_reflections.
func validateReflections(faces int, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial, maxBounces int, opt rf.ReflOptions) error {
	return rf.ValidateAccumulateReflections(faces, rays, g, m, maxBounces, opt)
}

// validatePaths runs rf's validation of trace_dfr_paths.
func validatePaths(faces int, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool, opt rf.PathOptions) error {
	_, err := rf.ValidateTraceDfrPaths(faces, tx, rx, st, m, active, opt)
	return err
}
