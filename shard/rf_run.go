package shard

import (
	"context"
	"slices"

	"github.com/rayd-go/rayd/rf"
)

// RunAccumDfrDirect executes accum_dfr_direct on the layer (spec §7.1):
// RunLanes over the caller's window, with the replicated states, material
// and active mask charged to a memory budget when remotes take windows. The
// replicas must implement the task (the CUDA replicas and the simulated
// devices do); the merged partials are the result.
func RunAccumDfrDirect(ctx context.Context, l *Layer, t *AccumDfrDirect) (*rf.AccumResult, error) {
	c := *t
	c.keyed = false // the caller may have changed the inputs since a key was taken
	c.replicated = l.replicatedBytes(&c, c.InputBytes())
	return RunLanes[*rf.AccumResult](ctx, l, &c)
}

// RunAccumDfrCoherentDirect executes accum_dfr_coherent_direct on the layer
// (spec §7.1), as RunAccumDfrDirect.
func RunAccumDfrCoherentDirect(ctx context.Context, l *Layer, t *AccumDfrCoherentDirect) (*rf.CoherentResult, error) {
	c := *t
	c.keyed = false
	c.replicated = l.replicatedBytes(&c, c.InputBytes())
	return RunLanes[*rf.CoherentResult](ctx, l, &c)
}

// replicatedBytes is the byte model's R of a grid_reduce call: bytes when a
// budget is set and the call will shard to remotes, else 0 (spec §3.3).
// Invalid calls get 0; RunLanes reports them.
func (l *Layer) replicatedBytes(t interface {
	Task
	Lanes() (int, int, int, error)
}, bytes int64) int64 {
	if l.opts.MemoryBudgetBytes <= 0 || len(l.devices) < 2 {
		return 0
	}
	total, offset, count, err := t.Lanes()
	if err != nil {
		return 0
	}
	begin, n, err := ResolveLaneWindow(total, offset, count)
	if err != nil {
		return 0
	}
	l.mu.Lock()
	w := slices.Clone(l.weightsLocked(t.Op().Key))
	l.mu.Unlock()
	op := t.Op()
	cands := LaneShards(l.devices, w, begin, n)
	if op.ZeroOffsetOnly || !remoteViable(cands, l.opts.MinLanesPerDevice+op.LaneFloorExtra) {
		return 0
	}
	return bytes
}

// RunAccumulateReflections executes accumulate_reflections on the layer
// (spec §7.2). After validating the batch (Rows) and checking the layer:
//
//   - Options.CollectWedges is one launch on the master over the whole batch
//     (dispatch master): the bounded event buffer has one global capacity,
//     slot order and ray-index space; with any chunking knob it is refused
//     (*RefusalError, «global capacity»);
//   - Options.Offload is refused (*RefusalError);
//   - an empty batch, a split that gives no remote a window, or a remote
//     window below MinLanesPerDevice + ceil(Gr/100) rows runs on the master
//     in one launch, unless ChunkRays or MemoryBudgetBytes asks for chunks
//     (then chunked on the master alone);
//   - otherwise the rows are cut into warp-aligned windows by weight
//     (dispatch batch-sharded) and, with ChunkRays or a budget, into chunks
//     without warp rounding (batch-chunked).
//
// The automatic accumulation strategy is pinned from the unsplit batch
// (PinReflectionStrategy) and every launch runs with it. Chunks fold into
// their device's partial in ascending row order, partials are summed on the
// master in device order (MergeReflections): reflection_count and ray
// counts exactly, grids up to float32 summation order.
func RunAccumulateReflections(ctx context.Context, l *Layer, t *AccumulateReflections) (*rf.ReflResult, error) {
	n, err := t.Rows()
	if err != nil {
		return nil, err
	}
	calls := l.startCount()
	l.rw.RLock()
	defer l.rw.RUnlock()
	reps, err := l.ready()
	if err != nil {
		return nil, err
	}
	s, task, err := l.planReflections(t, n)
	if err != nil {
		return nil, err
	}
	defer l.counted(l.record(s), calls)
	if res, ok, err := runResident[*rf.ReflResult](ctx, l, reps, s, task); ok {
		return res, err
	}
	r := &laneRun[*rf.ReflResult]{call: l.newCall(task.Op(), reps), t: task, s: s}
	res, err := r.run(ctx)
	return res, r.exit(err)
}

// planReflections plans accumulate_reflections over n rows and returns the
// task every launch runs (a copy with the pinned strategy).
func (l *Layer) planReflections(t *AccumulateReflections, n int) (*Schedule, *AccumulateReflections, error) {
	c := *t
	c.keyed = false // the caller may have changed the material since a key was taken
	l.mu.Lock()
	if l.poison != nil {
		defer l.mu.Unlock()
		return nil, nil, l.poison
	}
	w := slices.Clone(l.weightsLocked(OpAccumulateReflections))
	l.mu.Unlock()
	master := l.devices[0]
	whole := []Shard{{Device: master, Start: 0, Stop: n}}
	s := &Schedule{Dispatch: DispatchRecord{Operation: OpAccumulateReflections, Class: GridReduce.String(),
		Rows: n, Weights: w, Floor: l.opts.MinLanesPerDevice + c.Op().LaneFloorExtra}}
	masterOnly := func() (*Schedule, *AccumulateReflections, error) {
		s.Dispatch.Mode, s.Dispatch.Shards, s.Chunks = ModeMaster, whole, whole
		return s, &c, nil
	}
	if c.Options.CollectWedges {
		if l.chunked {
			return nil, nil, &RefusalError{Operation: OpAccumulateReflections,
				Reason: "cannot combine wedge collection with MultiDeviceOptions chunking, a memory budget, or offload: " +
					"WedgeEvents has one global capacity, overflow counter, slot order, and ray-index space"}
		}
		return masterOnly()
	}
	if l.opts.Offload != nil {
		return nil, nil, &RefusalError{Operation: OpAccumulateReflections,
			Reason: "returns one reduced grid and does not support MultiDeviceOptions.offload; " +
				"use ChunkRays or MemoryBudgetBytes without Offload"}
	}
	if n == 0 {
		return masterOnly()
	}
	cands := LaneShards(l.devices, w, 0, n)
	force := !remoteViable(cands, s.Dispatch.Floor)
	explicit := l.opts.ChunkRays > 0 || l.opts.MemoryBudgetBytes > 0
	if force && !explicit {
		return masterOnly()
	}
	shards := cands
	if force {
		shards = whole
	}
	c.Options.AccumulationStrategy = PinReflectionStrategy(n, c.MaxBounces, c.Grid.Cells(), c.Options)
	c.staged = c.Options.AccumulationStrategy == reflStrategyStaged
	c.remote = slices.ContainsFunc(shards, func(sh Shard) bool { return sh.Replica != 0 })
	op := c.Op()
	req := ChunkRequest{Operation: op.Key, Rows: n, RowBytes: op.RowBytes, ChunkRays: l.opts.ChunkRays,
		Budget: l.opts.MemoryBudgetBytes, Resident: 1}
	if req.Budget > 0 {
		req.Fixed = op.FixedBytes
	}
	size, src, err := SizeChunk(req)
	if err != nil {
		return nil, nil, err
	}
	s.Dispatch.Mode = ModeBatchSharded
	if explicit {
		s.Dispatch.Mode = ModeBatchChunked
	}
	s.Dispatch.Shards = shards
	s.Chunks = issueOrder(shards, fill(len(shards), size))
	s.Plan = &ChunkPlan{Operation: op.Key, TotalRows: n, ChunkRays: size, Source: src, RowBytes: op.RowBytes,
		BudgetBytes: budgetPtr(l.opts.MemoryBudgetBytes), ResidentChunks: 1, FixedOutputBytes: req.Fixed,
		ChunkCount: len(s.Chunks)}
	return s, &c, nil
}

// RunTraceDfrPaths executes trace_dfr_paths on the layer (spec §7.3). After
// validating the call (Rows: SourceLane layout, state limit, active,
// capacity), a layer with any chunking knob refuses it (*RefusalError);
// no transmitter, no path row per transmitter, one device, or a remote block
// of fewer than MinRaysPerDevice path rows runs on the master in one launch;
// otherwise the transmitters are cut into whole blocks by weight (row
// shards) and every block runs on its device (dispatch sharded, class
// source_lane), all blocks copied before the first launch. The blocks are
// concatenated on the master in transmitter order (TraceDfrPaths.Assemble):
// rows at their global positions, valid transmitter ids offset, counts
// summed, so the result is row for row the single-device export.
func RunTraceDfrPaths(ctx context.Context, l *Layer, t *TraceDfrPaths) (*rf.DfrPaths, error) {
	txs, err := t.Rows()
	if err != nil {
		return nil, err
	}
	calls := l.startCount()
	l.rw.RLock()
	defer l.rw.RUnlock()
	reps, err := l.ready()
	if err != nil {
		return nil, err
	}
	s, err := l.planPaths(txs, t.LanesPerTx())
	if err != nil {
		return nil, err
	}
	defer l.counted(l.record(s), calls)
	r := &rowRun[*rf.DfrPaths]{call: l.newCall(t.Op(), reps), t: t, s: s}
	res, err := r.run(ctx)
	return res, r.exit(err)
}

// planPaths plans trace_dfr_paths over txs transmitters of lanesPerTx path
// rows each.
func (l *Layer) planPaths(txs, lanesPerTx int) (*Schedule, error) {
	l.mu.Lock()
	if l.poison != nil {
		defer l.mu.Unlock()
		return nil, l.poison
	}
	w := slices.Clone(l.weightsLocked(OpTraceDfrPaths))
	l.mu.Unlock()
	if l.chunked {
		return nil, &RefusalError{Operation: OpTraceDfrPaths,
			Reason: "does not yet support MultiDeviceOptions chunking or offload; " +
				"build the multi-device scene without ChunkRays, MemoryBudgetBytes or Offload"}
	}
	master := l.devices[0]
	s := &Schedule{Dispatch: DispatchRecord{Operation: OpTraceDfrPaths, Class: ClassSourceLane, Rows: txs,
		Weights: w, Floor: l.opts.MinRaysPerDevice}}
	shards := RowShards(l.devices, w, txs)
	viable := txs > 0 && lanesPerTx > 0 && len(l.devices) > 1
	remotes := 0
	for _, sh := range shards {
		if sh.Replica != 0 {
			remotes++
			viable = viable && int64(sh.Len())*int64(lanesPerTx) >= int64(l.opts.MinRaysPerDevice)
		}
	}
	if !viable || remotes == 0 {
		s.Dispatch.Mode = ModeMaster
		s.Dispatch.Shards = []Shard{{Device: master, Start: 0, Stop: txs}}
		s.Chunks = s.Dispatch.Shards
		s.Depth = 1
		return s, nil
	}
	s.Dispatch.Mode = ModeSharded
	s.Dispatch.Shards = shards
	s.Chunks = shards
	s.Depth = 0 // every block is copied before the first launch
	return s, nil
}
