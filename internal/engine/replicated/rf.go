package replicated

import (
	"context"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The RF operations through the layer (multidevice spec §7):
//
//   - AccumDfrDirect and AccumDfrCoherentDirect shard the caller's lane
//     window into warp-aligned windows by weight (the window stays on the
//     master when a remote window would fall below MinLanesPerDevice); the
//     partial grids are summed on the master in device order: counters
//     exactly, grids up to float32 summation order.
//   - AccumulateReflections shards the ray rows the same way;
//     opt.CollectWedges is one launch on the master, and is refused
//     (shard.ErrUnsupported) with any chunking knob, as is Offload.
//   - TraceDfrPaths requires opt.Layout = rf.SourceLane and cuts the
//     transmitters into whole blocks; rows come back at their global
//     positions.

// AccumDfrDirect runs accum_dfr_direct through the layer; a window the plan
// keeps on the master runs as the single-device call on its replica.
func (e *Engine) AccumDfrDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.AccumOptions) (*rf.AccumResult, error) {
	if err := e.checkMeshMasks("accum_dfr_direct"); err != nil {
		return nil, err
	}
	t := &shard.AccumDfrDirect{Faces: e.tables.NumFaces(), States: st, Grid: g, Material: m, Active: active, Options: opt}
	defer e.l.Count()()
	rep, onMaster, err := shard.LanesOnMaster[*rf.AccumResult](e.l, t)
	if err != nil {
		return nil, err
	}
	if onMaster && e.cuda != nil {
		if cr, ok := e.cuda.Lookup(rep); ok {
			var res *rf.AccumResult
			err := onReplica(rep, func() error {
				return e.WithStream(ctx, func(s *launch.Stream) (err error) {
					res, err = cr.BVH().AccumDfrDirectHost(s, st, g, m, active, opt, e.tables.NumFaces(), e.tables.Triangle)
					return err
				})
			})
			return res, err
		}
	}
	return shard.RunAccumDfrDirect(ctx, e.l, t)
}

// AccumDfrCoherentDirect runs accum_dfr_coherent_direct through the layer.
func (e *Engine) AccumDfrCoherentDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.CoherentOptions) (*rf.CoherentResult, error) {
	if err := e.checkMeshMasks("accum_dfr_coherent_direct"); err != nil {
		return nil, err
	}
	return shard.RunAccumDfrCoherentDirect(ctx, e.l, &shard.AccumDfrCoherentDirect{Faces: e.tables.NumFaces(),
		States: st, Grid: g, Material: m, Active: active, Options: opt})
}

// AccumulateReflections runs accumulate_reflections through the layer.
func (e *Engine) AccumulateReflections(ctx context.Context, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial, maxBounces int, opt rf.ReflOptions) (*rf.ReflResult, error) {
	if err := e.checkMeshMasks("accumulate_reflections"); err != nil {
		return nil, err
	}
	return shard.RunAccumulateReflections(ctx, e.l, &shard.AccumulateReflections{Faces: e.tables.NumFaces(),
		Rays: rays, Grid: g, Material: m, MaxBounces: maxBounces, Options: opt})
}

// TraceDfrPaths runs trace_dfr_paths through the layer.
func (e *Engine) TraceDfrPaths(ctx context.Context, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool, opt rf.PathOptions) (*rf.DfrPaths, error) {
	if err := e.checkMeshMasks("trace_dfr_paths"); err != nil {
		return nil, err
	}
	return shard.RunTraceDfrPaths(ctx, e.l, &shard.TraceDfrPaths{Faces: e.tables.NumFaces(), Tx: tx, Rx: rx,
		States: st, Material: m, Active: active, Options: opt})
}
