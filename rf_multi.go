package rayd

import (
	"context"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// RF operations on a replicated multi-device scene (multidevice spec §7).
// Each public RF method of Scene hands a scene served by the layer to the
// function below of the same operation; every other engine without an RF
// path keeps ErrBackendUnavailable. Inputs are validated by package rf's
// rules before the layer plans anything (the same *rf.ValidationError as on
// a single device), after the layer's own checks (states and grid present,
// the reflection batch's per-row inputs, the SourceLane layout); then:
//
//   - AccumDfrDirect and AccumDfrCoherentDirect shard the caller's lane
//     window into warp-aligned windows by weight (the window stays on the
//     master when a remote window would fall below MinLanesPerDevice); the
//     partial grids are summed on the master in device order: counters
//     exactly, grids up to float32 summation order.
//   - AccumulateReflections shards the ray rows the same way (the remote
//     floor is raised by the grid a remote returns); opt.CollectWedges is one
//     launch on the master, and is refused (shard.ErrUnsupported) with any
//     chunking knob, as is MultiDeviceOptions.Offload.
//   - TraceDfrPaths requires opt.Layout = rf.SourceLane (an
//     *rf.ValidationError otherwise: Compact rows have no global position)
//     and cuts the transmitters into whole blocks; rows come back at their
//     global positions, row for row the single-device export. Any chunking
//     knob is refused (shard.ErrUnsupported).
//
// LastDispatch and LastChunkPlan report how the call ran.

// accumDfrDirectMulti runs accum_dfr_direct through the scene's layer.
func (s *Scene) accumDfrDirectMulti(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial,
	active []bool, opt rf.AccumOptions) (*rf.AccumResult, error) {
	e, ok := s.eng.(*layerEngine)
	if !ok {
		return nil, s.rfUnavailable(shard.OpAccumDfrDirect)
	}
	t := &shard.AccumDfrDirect{Faces: s.tables.NumFaces(), States: st, Grid: g, Material: m, Active: active, Options: opt}
	if rep, ok, err := shard.LanesOnMaster[*rf.AccumResult](e.l, t); err != nil {
		return nil, err
	} else if cr, cuda := shard.Unwrap(rep).(cudaReplica); ok && cuda {
		// Every lane on the master: the single-device call on its replica.
		n, err := validateDirect(s.tables.NumFaces(), st, g, m, active, opt)
		if err != nil {
			return nil, err
		}
		opt.LaneCount = n
		var res *rf.AccumResult
		err = onReplica(rep, func() error {
			return e.onMaster(ctx, func(sl *launch.Stream) (err error) {
				res, err = cr.BVH().AccumDfrDirectHost(sl, st, g, m, active, opt, s.tables.NumFaces(), s.tables.Triangle)
				return err
			})
		})
		return res, err
	}
	return shard.RunAccumDfrDirect(ctx, e.l, t)
}

// onMaster runs fn on a stream of the master and waits for it.
func (e *layerEngine) onMaster(ctx context.Context, fn func(st *launch.Stream) error) error {
	m, err := e.acquireStream(ctx)
	if err != nil {
		return err
	}
	defer e.releaseStream(m)
	if err := fn(m.st); err != nil {
		_ = m.st.Synchronize()
		return err
	}
	return m.st.Synchronize()
}

// accumDfrCoherentDirectMulti runs accum_dfr_coherent_direct through the
// scene's layer.
func (s *Scene) accumDfrCoherentDirectMulti(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial,
	active []bool, opt rf.CoherentOptions) (*rf.CoherentResult, error) {
	e, ok := s.eng.(*layerEngine)
	if !ok {
		return nil, s.rfUnavailable(shard.OpAccumDfrCoherentDirect)
	}
	return shard.RunAccumDfrCoherentDirect(ctx, e.l, &shard.AccumDfrCoherentDirect{Faces: s.tables.NumFaces(),
		States: st, Grid: g, Material: m, Active: active, Options: opt})
}

// accumulateReflectionsMulti runs accumulate_reflections through the
// scene's layer.
func (s *Scene) accumulateReflectionsMulti(ctx context.Context, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial,
	maxBounces int, opt rf.ReflOptions) (*rf.ReflResult, error) {
	e, ok := s.eng.(*layerEngine)
	if !ok {
		return nil, s.rfUnavailable(shard.OpAccumulateReflections)
	}
	return shard.RunAccumulateReflections(ctx, e.l, &shard.AccumulateReflections{Faces: s.tables.NumFaces(),
		Rays: rays, Grid: g, Material: m, MaxBounces: maxBounces, Options: opt})
}

// traceDfrPathsMulti runs trace_dfr_paths through the scene's layer.
func (s *Scene) traceDfrPathsMulti(ctx context.Context, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial,
	active []bool, opt rf.PathOptions) (*rf.DfrPaths, error) {
	e, ok := s.eng.(*layerEngine)
	if !ok {
		return nil, s.rfUnavailable(shard.OpTraceDfrPaths)
	}
	return shard.RunTraceDfrPaths(ctx, e.l, &shard.TraceDfrPaths{Faces: s.tables.NumFaces(), Tx: tx, Rx: rx,
		States: st, Material: m, Active: active, Options: opt})
}
