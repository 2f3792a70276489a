package shard

import (
	"fmt"
	"slices"
)

// Mode is a dispatch decision (Layer.LastDispatch).
type Mode string

// The dispatch modes.
const (
	// ModeSingle is the plain single-device path of a scene without a
	// layer; the layer never records it, callers report it.
	ModeSingle Mode = "single-device"
	// ModeMaster runs the whole call on the master replica with the
	// caller's own inputs: bitwise the single-device call.
	ModeMaster Mode = "master"
	// ModeSharded issues one launch per weighted shard (DisablePipeline).
	ModeSharded Mode = "sharded"
	// ModePipelined cuts every remote shard into chunks and overlaps their
	// copies with compute; the master runs its shard in one launch.
	ModePipelined Mode = "pipelined"
	// ModeChunked cuts every shard, master included, into chunks of the
	// memory contract (ChunkRays, MemoryBudgetBytes, Offload).
	ModeChunked Mode = "chunked"
	// ModeLaneSharded runs one launch per grid_reduce lane window.
	ModeLaneSharded Mode = "lane-sharded"
	// ModeLaneChunked cuts grid_reduce lane windows into chunks.
	ModeLaneChunked Mode = "lane-chunked"
)

// DispatchRecord describes how a call was dispatched.
type DispatchRecord struct {
	// Operation is the operation key.
	Operation string `json:"operation"`
	// Class is "per_ray" or "grid_reduce".
	Class string `json:"class"`
	// Mode is the decision.
	Mode Mode `json:"dispatch"`
	// Rows is the batch size (the lane window's length for grid_reduce).
	Rows int `json:"rows"`
	// Weights are the resolved weights of the operation.
	Weights []float64 `json:"weights"`
	// Shards are the row shards (lane windows) that ran.
	Shards []Shard `json:"shards"`
	// Floor is the per-remote floor the candidate split was judged by.
	Floor int `json:"floor"`
	// Path is how the rows of remote shards travelled (per_ray calls with
	// a remote shard; empty when every row ran on the master).
	Path Path `json:"path,omitempty"`
	// DriverCalls is the number of driver calls the call made, counted in
	// the driver layer from the start of the layer call to its return
	// (context binds excluded; ContextBinds counts them). It is an upper
	// bound when other goroutines used the driver during the call, and
	// zero when the layer has no counter (simulated devices).
	DriverCalls int64 `json:"driver_calls"`
	// ContextBinds is the number of context binds (cuCtxSetCurrent) the
	// call made, counted like DriverCalls.
	ContextBinds int64 `json:"context_binds"`
}

// Path is how the rows of a per_ray call reach a remote replica and how its
// results reach the master (DispatchRecord.Path, Options.Transfer).
type Path string

// The transfer paths.
const (
	// PathPeerDirect: one launch per device; the remote reads its rows from
	// the master's inputs and writes its results into the master's outputs
	// (peer access, or a remote on the master's own device).
	PathPeerDirect Path = "peer-direct"
	// PathCompact: peer-direct, but an intersect remote writes a 16-byte
	// record per row {t, u, v, slot} into the master's memory and the
	// master expands it into the full record with the kernel's own
	// arithmetic.
	PathCompact Path = "compact"
	// PathCopy: the rows are copied to the remote and its results copied
	// back (no peer access, host inputs or outputs, or forced).
	PathCopy Path = "copy"
)

// Transfer selects the per_ray transfer path of a layer's remotes
// (Options.Transfer). The zero value chooses.
type Transfer string

// The transfer choices.
const (
	// TransferAuto chooses per call: peer-direct where every remote can
	// address the master's memory, compact for intersect when the link is
	// the bound, copy otherwise.
	TransferAuto Transfer = ""
	// TransferPeerDirect forces the peer-direct path where it is possible
	// (copy otherwise).
	TransferPeerDirect Transfer = "peer-direct"
	// TransferCompact forces the compact path for intersect where it is
	// possible (peer-direct for the other operations, copy otherwise).
	TransferCompact Transfer = "compact"
	// TransferCopy forces the copy path (tests, diagnosis).
	TransferCopy Transfer = "copy"
)

// Schedule is a planned call: the dispatch decision, the chunk plan (nil
// for a per_ray master call) and the chunks in issue order.
type Schedule struct {
	Dispatch DispatchRecord
	Plan     *ChunkPlan
	// Chunks lists every launch in issue order: round-robin by chunk index
	// across devices (device order), ascending rows within a device.
	Chunks []Shard
	// Depth is the number of gathered chunks kept in flight before the
	// oldest is retired: twice the number of devices with work, or 0 when
	// nothing retires before every chunk was launched (sharded and lane
	// dispatches).
	Depth int
}

// issueOrder cuts each shard into chunks of size[i] rows and interleaves
// them round-robin by chunk index, every device in device order.
func issueOrder(shards []Shard, size []int) []Shard {
	queues := make([][]Shard, len(shards))
	for i, s := range shards {
		for lo := s.Start; lo < s.Stop; lo += size[i] {
			queues[i] = append(queues[i], Shard{Device: s.Device, Replica: s.Replica, Start: lo, Stop: min(lo+size[i], s.Stop)})
		}
	}
	var out []Shard
	for k := 0; ; k++ {
		more := false
		for _, q := range queues {
			if k < len(q) {
				out = append(out, q[k])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

func fill(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// PlanRows plans a per_ray call of op over rows rows without running it:
// chunked when a chunking knob is set (at every batch size, the floor and
// master-only weights notwithstanding; budget refusals happen here, before
// any launch); master when the weighted remote shards are absent or any is
// below Floor(MinRaysPerDevice, op.TransferRowBytes); sharded with
// DisablePipeline; pipelined otherwise.
func (l *Layer) PlanRows(op Op, rows int) (*Schedule, error) {
	return l.planRows(op, rows, PathCopy)
}

// PlanRowsOn is PlanRows for rows that reach the remotes by path (what the
// replicas' Router says; RunRows asks them): a peer-direct or compact path
// needs no copies to overlap, so a sharded call is one launch per shard,
// the remotes' launches issued before the master's. The record carries the
// path whenever a remote shard runs.
func (l *Layer) PlanRowsOn(op Op, rows int, path Path) (*Schedule, error) {
	return l.planRows(op, rows, path)
}

func (l *Layer) planRows(op Op, rows int, path Path) (*Schedule, error) {
	l.mu.Lock()
	if l.poison != nil {
		defer l.mu.Unlock()
		return nil, l.poison
	}
	w := slices.Clone(l.weightsLocked(op.Key))
	l.mu.Unlock()
	if rows < 0 {
		return nil, &PlanError{Operation: op.Key, Field: "rows", Reason: fmt.Sprintf("negative row count %d", rows)}
	}
	if err := checkOp(op); err != nil {
		return nil, err
	}
	master := l.devices[0]
	shards := RowShards(l.devices, w, rows)
	s := &Schedule{Dispatch: DispatchRecord{
		Operation: op.Key, Class: op.Class.String(), Rows: rows, Weights: w,
		Floor: Floor(l.opts.MinRaysPerDevice, op.TransferRowBytes),
	}}
	cost := op.MemoryRowBytes()
	switch {
	case l.chunked:
		var fixed int64
		if l.opts.MemoryBudgetBytes > 0 && l.opts.Offload == nil {
			fixed = int64(rows) * int64(op.resultRowBytes())
		}
		size, src, err := SizeChunk(ChunkRequest{Operation: op.Key, Rows: rows, RowBytes: cost,
			ChunkRays: l.opts.ChunkRays, Budget: l.opts.MemoryBudgetBytes, Resident: ResidentChunks, Fixed: fixed})
		if err != nil {
			return nil, err
		}
		s.Dispatch.Mode = ModeChunked
		s.Chunks = issueOrder(shards, fill(len(shards), size))
		s.Plan = &ChunkPlan{Operation: op.Key, TotalRows: rows, ChunkRays: size, Source: src, RowBytes: cost,
			BudgetBytes: budgetPtr(l.opts.MemoryBudgetBytes), ResidentChunks: ResidentChunks,
			FixedOutputBytes: fixed, ChunkCount: len(s.Chunks)}
		if rows == 0 {
			s.Chunks = []Shard{{Device: master}} // one empty launch, no hook call
		}
		s.Dispatch.Shards = shards
		s.Depth = 2 * max(len(shards), 1)
	case len(l.devices) < 2 || rows <= 0 || !remoteViable(shards, s.Dispatch.Floor):
		s.Dispatch.Mode = ModeMaster
		s.Dispatch.Shards = []Shard{{Device: master, Start: 0, Stop: rows}}
		s.Chunks = s.Dispatch.Shards
		s.Depth = 1
	case !l.pipelined || path.Direct():
		s.Dispatch.Mode = ModeSharded
		s.Dispatch.Shards = shards
		s.Chunks = shards
		if path.Direct() {
			s.Chunks = remotesFirst(shards)
		}
		widest := 0
		for _, sh := range shards {
			widest = max(widest, sh.Len())
		}
		s.Plan = &ChunkPlan{Operation: op.Key, TotalRows: rows, ChunkRays: widest, Source: SourceShard,
			RowBytes: cost, ResidentChunks: 1, ChunkCount: len(shards)}
		s.Depth = 0 // every shard is scattered before the first launch
	default:
		s.Dispatch.Mode = ModePipelined
		s.Dispatch.Shards = shards
		chunks := max(l.opts.PipelineChunksPerDevice, 2)
		widest := 0
		for _, sh := range shards {
			widest = max(widest, sh.Len())
		}
		remote := max((widest+chunks-1)/chunks, 1)
		size := fill(len(shards), remote)
		masterSize := 0
		for i, sh := range shards {
			if sh.Replica == 0 {
				size[i] = sh.Len() // the master runs its shard in one launch
				masterSize = sh.Len()
			}
		}
		s.Chunks = issueOrder(shards, size)
		s.Plan = &ChunkPlan{Operation: op.Key, TotalRows: rows, ChunkRays: remote, MasterChunkRays: masterSize,
			Source: SourcePipeline, RowBytes: cost, ResidentChunks: ResidentChunks, ChunkCount: len(s.Chunks)}
		s.Depth = 2 * len(shards)
	}
	if s.Dispatch.Mode != ModeMaster && len(l.devices) > 1 {
		s.Dispatch.Path = path
	}
	return s, nil
}

// Direct reports whether rows travel without copies (PathPeerDirect,
// PathCompact).
func (p Path) Direct() bool { return p == PathPeerDirect || p == PathCompact }

// remotesFirst returns the shards with the master's moved last: a direct
// call issues the remotes' launches first, so that they start while the
// host still issues the master's.
func remotesFirst(shards []Shard) []Shard {
	out := make([]Shard, 0, len(shards))
	for _, s := range shards {
		if s.Replica != 0 {
			out = append(out, s)
		}
	}
	for _, s := range shards {
		if s.Replica == 0 {
			out = append(out, s)
		}
	}
	return out
}

func budgetPtr(b int64) *int64 {
	if b <= 0 {
		return nil
	}
	return &b
}

// PlanLanes plans a grid_reduce call of op over the caller's lane window
// (offset, count; count < 0 means the rest) of a lane space of total lanes,
// without running it (spec §7.1): warp-aligned windows by weight; the whole
// window on the master when op.ZeroOffsetOnly, when no remote gets a window
// or when any remote window is below MinLanesPerDevice + op.LaneFloorExtra
// (unless ChunkRays or MemoryBudgetBytes asks for chunks, which then run on
// the master alone). Offload is ignored by grid_reduce operations.
func (l *Layer) PlanLanes(op Op, total, offset, count int) (*Schedule, error) {
	l.mu.Lock()
	if l.poison != nil {
		defer l.mu.Unlock()
		return nil, l.poison
	}
	w := slices.Clone(l.weightsLocked(op.Key))
	l.mu.Unlock()
	if err := checkOp(op); err != nil {
		return nil, err
	}
	begin, n, err := ResolveLaneWindow(total, offset, count)
	if err != nil {
		return nil, err
	}
	master := l.devices[0]
	floor := l.opts.MinLanesPerDevice + op.LaneFloorExtra
	s := &Schedule{Dispatch: DispatchRecord{Operation: op.Key, Class: op.Class.String(), Rows: n, Weights: w, Floor: floor}}
	whole := []Shard{{Device: master, Start: begin, Stop: begin + n}}
	masterOnly := func(p *ChunkPlan) *Schedule {
		s.Dispatch.Mode, s.Dispatch.Shards, s.Chunks, s.Plan = ModeMaster, whole, whole, p
		p.ChunkCount = 1
		return s
	}
	base := ChunkPlan{Operation: op.Key, TotalRows: n, ChunkRays: max(n, 1), Source: SourceShard,
		RowBytes: op.RowBytes, BudgetBytes: budgetPtr(l.opts.MemoryBudgetBytes), ResidentChunks: 1}
	if op.ZeroOffsetOnly && begin != 0 {
		return masterOnly(&base), nil // the master's backend refuses the offset itself
	}
	cands := LaneShards(l.devices, w, begin, n)
	force := op.ZeroOffsetOnly || !remoteViable(cands, floor)
	req := ChunkRequest{Operation: op.Key, Rows: n, RowBytes: op.RowBytes, ChunkRays: l.opts.ChunkRays,
		Budget: l.opts.MemoryBudgetBytes, Resident: 1}
	if req.Budget > 0 {
		req.Fixed = op.FixedBytes
	}
	size, src, err := SizeChunk(req)
	if err == nil && op.WarpChunks {
		size, err = alignLaneChunk(size, src, req)
	}
	if err != nil {
		return nil, err
	}
	p := base
	p.ChunkRays, p.Source, p.FixedOutputBytes = size, src, req.Fixed
	explicit := l.opts.ChunkRays > 0 || l.opts.MemoryBudgetBytes > 0
	switch {
	case op.ZeroOffsetOnly && size < n:
		return nil, fmt.Errorf("%w: %s: the CUDA trace backend cannot split a lane window (chunk %d < window %d lanes)",
			ErrUnsupported, op.Key, size, n)
	case op.ZeroOffsetOnly, n == 0, force && !explicit:
		return masterOnly(&p), nil
	}
	shards := cands
	if force {
		shards = whole
	}
	s.Dispatch.Mode = ModeLaneSharded
	if explicit {
		s.Dispatch.Mode = ModeLaneChunked
	}
	s.Dispatch.Shards = shards
	s.Chunks = issueOrder(shards, fill(len(shards), size))
	p.ChunkCount = len(s.Chunks)
	s.Plan = &p
	s.Depth = 0
	return s, nil
}
