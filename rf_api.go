package rayd

import (
	"context"
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/rf"
)

// RF operations (spec §6–§7). On the CUDA backend they run the device
// kernels of package accel over the scene's BVH (the OptiX backend builds
// such a BVH for each call); on the CPU backend they run package rf's
// float64 reference over the reference scene. Inputs are
// validated by package rf on both backends (same errors, same messages:
// *rf.ValidationError). On a replicated multi-device scene they are sharded
// by the layer (rf_multi.go): lane windows or warp-aligned row windows summed
// on the master in device order, transmitter blocks for paths.

// AccumDfrDirect is accum_dfr_direct (spec §6.2): the order-1 Monte-Carlo
// diffraction accumulation of states onto grid over the lane window of opt
// (direct, Keller-cone and reflection-suffix samples). m nil is the default
// material; active is empty, one broadcast flag or one flag per state. Lane
// windows that partition the lane space sum (AccumResult.Add) to the full
// call: counters exactly, grids up to float32 summation order.
func (s *Scene) AccumDfrDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool,
	opt rf.AccumOptions) (*rf.AccumResult, error) {
	if err := s.rfEnter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	switch e := s.eng.(type) {
	case *cpuEngine:
		return rf.AccumDfrDirect(rfScene{e.s}, st, g, m, active, opt)
	case *cudaEngine:
		n, err := validateDirect(s.tables.NumFaces(), st, g, m, active, opt)
		if err != nil {
			return nil, err
		}
		opt.LaneCount = n
		var res *rf.AccumResult
		err = e.rfRun(ctx, s.tables, func(sl *slot, t rfTracer) (err error) {
			res, err = t.AccumDfrDirectHost(sl.s, st, g, m, active, opt, s.tables.NumFaces(), s.tables.Triangle)
			return err
		})
		return res, err
	}
	return s.accumDfrDirectMulti(ctx, st, g, m, active, opt)
}

// AccumDfrCoherentDirect is accum_dfr_coherent_direct (spec §6.4): the
// deterministic coherent first-order accumulation over the S·C lanes (state
// g mod S, cell g div S) of the window of opt. Phases are evaluated in
// float64 on both backends.
func (s *Scene) AccumDfrCoherentDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial,
	active []bool, opt rf.CoherentOptions) (*rf.CoherentResult, error) {
	if err := s.rfEnter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	switch e := s.eng.(type) {
	case *cpuEngine:
		return rf.AccumDfrCoherentDirect(rfScene{e.s}, st, g, m, active, opt)
	case *cudaEngine:
		n, err := validateCoherent(s.tables.NumFaces(), st, g, m, active, opt)
		if err != nil {
			return nil, err
		}
		opt.LaneCount = n
		var res *rf.CoherentResult
		err = e.rfRun(ctx, s.tables, func(sl *slot, t rfTracer) (err error) {
			res, err = t.AccumDfrCoherentHost(sl.s, st, g, m, active, opt, s.tables.NumFaces(), s.tables.Triangle)
			return err
		})
		return res, err
	}
	return s.accumDfrCoherentDirectMulti(ctx, st, g, m, active, opt)
}

// AccumulateReflections is accumulate_reflections (spec §7.1): every active
// ray follows its specular chain for up to maxBounces Fresnel reflections
// (m: one row per scene face; nil is the default material, which reflects
// nothing) and each grid-plane crossing adds its complex field and power to
// the crossed cell. With opt.CollectWedges the reflection events are
// returned too (in device order on the CUDA backend).
func (s *Scene) AccumulateReflections(ctx context.Context, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial,
	maxBounces int, opt rf.ReflOptions) (*rf.ReflResult, error) {
	if err := s.rfEnter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	switch e := s.eng.(type) {
	case *cpuEngine:
		return rf.AccumulateReflections(rfScene{e.s}, rays, g, m, maxBounces, opt)
	case *cudaEngine:
		if err := validateReflections(s.tables.NumFaces(), rays, g, m, maxBounces, opt); err != nil {
			return nil, err
		}
		var res *rf.ReflResult
		err := e.rfRun(ctx, s.tables, func(sl *slot, t rfTracer) (err error) {
			res, err = t.AccumulateReflectionsHost(sl.s, rays, g, m, maxBounces, opt, s.tables.NumFaces())
			return err
		})
		return res, err
	}
	return s.accumulateReflectionsMulti(ctx, rays, g, m, maxBounces, opt)
}

// TraceDfrPaths is trace_dfr_paths (spec §7.2): the first-order diffraction
// path, with its UTD field, of every (transmitter, receiver, state) lane;
// active is required (one flag per state of the limit min(S, MaxPaths)).
// Compact rows come in device order on the CUDA backend; SourceLane rows
// sit at ((tx·R + rx)·M + s) on both.
func (s *Scene) TraceDfrPaths(ctx context.Context, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool,
	opt rf.PathOptions) (*rf.DfrPaths, error) {
	if err := s.rfEnter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	switch e := s.eng.(type) {
	case *cpuEngine:
		return rf.TraceDfrPaths(rfScene{e.s}, tx, rx, st, m, active, opt)
	case *cudaEngine:
		if err := validatePaths(s.tables.NumFaces(), tx, rx, st, m, active, opt); err != nil {
			return nil, err
		}
		var res *rf.DfrPaths
		err := e.rfRun(ctx, s.tables, func(sl *slot, t rfTracer) (err error) {
			res, err = t.TraceDfrPathsHost(sl.s, tx, rx, st, m, active, opt, s.tables.NumFaces(), s.tables.Triangle)
			return err
		})
		return res, err
	}
	return s.traceDfrPathsMulti(ctx, tx, rx, st, m, active, opt)
}

// rfEnter checks ctx and takes the scene's read lock.
func (s *Scene) rfEnter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.rlock()
}

func (s *Scene) rfUnavailable(op string) error {
	return fmt.Errorf("%w: %s does not run on a replicated multi-device scene yet", ErrBackendUnavailable, op)
}

// rfTracer is what the RF operations need of a device tracer: the host-level
// RF calls of accel.BVH.
type rfTracer interface {
	AccumDfrDirectHost(s *launch.Stream, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool,
		opt rf.AccumOptions, faces int, tri accel.TriangleFunc) (*rf.AccumResult, error)
	AccumDfrCoherentHost(s *launch.Stream, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool,
		opt rf.CoherentOptions, faces int, tri accel.TriangleFunc) (*rf.CoherentResult, error)
	AccumulateReflectionsHost(s *launch.Stream, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial,
		maxBounces int, opt rf.ReflOptions, faces int) (*rf.ReflResult, error)
	TraceDfrPathsHost(s *launch.Stream, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool,
		opt rf.PathOptions, faces int, tri accel.TriangleFunc) (*rf.DfrPaths, error)
}

// rfRun runs fn on a free query slot with the engine's BVH. A tracer
// without the RF kernels (OptiX) gets a BVH of the scene built on the slot's
// stream for this call and freed after it.
func (e *cudaEngine) rfRun(ctx context.Context, tables *geom.Tables, fn func(sl *slot, t rfTracer) error) (err error) {
	sl, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer e.release(sl)
	t, ok := e.bvh.(rfTracer)
	if !ok || isNilTracer(e.bvh) {
		var b *accel.BVH
		if b, err = accel.Build(sl.s, tables); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, b.Close()) }()
		t = b
	}
	return fn(sl, t)
}

// rfScene adapts the reference scene to rf.Scene.
type rfScene struct{ s *ref.Scene }

func (a rfScene) NumFaces() int                          { return a.s.NumFaces() }
func (a rfScene) Triangle(f int) (p0, p1, p2 [3]float32) { return a.s.Tables().Triangle(f) }
func (a rfScene) AnyHit(o, d [3]float32, tmin, tmax float32) bool {
	return a.s.AnyHit(o, d, tmin, tmax)
}
func (a rfScene) ClosestHit(o, d [3]float32, tmin, tmax float32) (rf.Hit, bool) {
	h, ok := a.s.Closest(o, d, tmin, tmax)
	return rf.Hit{T: h.T, U: h.U, V: h.V, Prim: h.Prim}, ok
}

// rfFaces is an rf.Scene of n faces that is never traced: package rf's
// operations called with it and an empty workload only validate.
type rfFaces int

func (n rfFaces) NumFaces() int                                         { return int(n) }
func (rfFaces) Triangle(int) (p0, p1, p2 [3]float32)                    { return }
func (rfFaces) AnyHit(_, _ [3]float32, _, _ float32) bool               { return false }
func (rfFaces) ClosestHit(_, _ [3]float32, _, _ float32) (rf.Hit, bool) { return rf.Hit{}, false }

// resolveWindow is rf.ResolveWindow with the error naming op.
func resolveWindow(op string, offset, count, total int) (int, error) {
	n, err := rf.ResolveWindow(offset, count, total)
	var ve *rf.ValidationError
	if errors.As(err, &ve) {
		ve.Op = op
	}
	return n, err
}

// validateDirect runs rf's validation of accum_dfr_direct without a lane and
// returns the window's lane count.
func validateDirect(faces int, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.AccumOptions) (int, error) {
	o := opt
	o.LaneOffset, o.LaneCount, o.Seed = 0, 0, 0
	if _, err := rf.AccumDfrDirect(rfFaces(faces), st, g, m, active, o); err != nil {
		return 0, err
	}
	n, err := resolveWindow("accum_dfr_direct", opt.LaneOffset, opt.LaneCount, opt.DirectSamples+opt.KellerSamples+opt.SuffixSamples)
	if err != nil {
		return 0, err
	}
	o.Seed = opt.Seed
	_, err = rf.AccumDfrDirect(rfFaces(faces), st, g, m, active, o)
	return n, err
}

// validateCoherent runs rf's validation of accum_dfr_coherent_direct
// without a lane and returns the window's lane count.
func validateCoherent(faces int, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.CoherentOptions) (int, error) {
	o := opt
	o.LaneOffset, o.LaneCount = 0, 0
	if _, err := rf.AccumDfrCoherentDirect(rfFaces(faces), st, g, m, active, o); err != nil {
		return 0, err
	}
	return resolveWindow("accum_dfr_coherent_direct", opt.LaneOffset, opt.LaneCount, st.StateCount()*g.Res0*g.Res1)
}

// validateReflections runs rf's validation of accumulate_reflections with
// every row inactive.
func validateReflections(faces int, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial, maxBounces int, opt rf.ReflOptions) error {
	if n := len(rays.O) / 3; len(rays.Active) == 0 || len(rays.Active) == n {
		rays.Active = make([]bool, n)
	}
	opt.CollectWedges = false
	_, err := rf.AccumulateReflections(rfFaces(faces), rays, g, m, maxBounces, opt)
	return err
}

// validatePaths runs rf's validation of trace_dfr_paths without a
// transmitter, then the checks that depend on the transmitters.
func validatePaths(faces int, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool, opt rf.PathOptions) error {
	const op = "trace_dfr_paths"
	if len(tx)%3 != 0 {
		return &rf.ValidationError{Op: op, Field: "tx_positions", Kind: rf.ErrLength,
			Reason: fmt.Sprintf("length %d is not a multiple of 3", len(tx))}
	}
	o := opt
	o.TxPolarization = nil
	if _, err := rf.TraceDfrPaths(rfFaces(faces), nil, rx, st, m, active, o); err != nil {
		return err
	}
	if np := len(opt.TxPolarization); np%3 != 0 || (np != 0 && np != 3 && np != len(tx)) {
		return &rf.ValidationError{Op: op, Field: "tx_polarization", Kind: rf.ErrLength,
			Reason: fmt.Sprintf("tx_pol width must be 1 or match tx_pos. (%d values, %d transmitters)", np, len(tx)/3)}
	}
	if c := int64(len(tx)/3) * int64(len(rx)/3) * int64(len(active)); c > 1<<31-1 {
		return &rf.ValidationError{Op: op, Field: "capacity", Kind: rf.ErrCapacity,
			Reason: fmt.Sprintf("capacity does not fit in int32. (%d)", c)}
	}
	return nil
}
