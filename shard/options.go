package shard

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Defaults of the multi-device knobs (the seed's values). A zero field of
// Options means the default.
const (
	// DefaultPipelineChunksPerDevice is the number of chunks the widest
	// shard is cut into by the pipelined executor.
	DefaultPipelineChunksPerDevice = 4
	// DefaultMinRaysPerDevice is the baseline per-remote-shard row floor.
	DefaultMinRaysPerDevice = 262144
	// DefaultMinLanesPerDevice is the per-remote-window lane floor of
	// grid_reduce operations.
	DefaultMinLanesPerDevice = 262144
	// FloorBaselineBytes is the transfer width at which the row floor is
	// MinRaysPerDevice; wider rows raise it proportionally.
	FloorBaselineBytes = 100
	// ResidentChunks is the number of chunks per device charged to the
	// memory budget of a per_ray plan (copied inputs, outputs and tape).
	ResidentChunks = 3
	// WarpLanes is the lane alignment of grid_reduce windows and chunks.
	WarpLanes = 32
)

// Options are the multi-device knobs. The zero value means the seed's
// defaults: equal weights, peer access and identical devices required,
// warm-up on, pipelined dispatch with 4 chunks per device, no chunking and
// floors of 262144 rows and lanes per remote device. Booleans are phrased so
// that false is the safe setting; an unset (zero) integer means its default,
// and a negative one (or PipelineChunksPerDevice == 1) is an error.
//
// Options are copied by Plan; later changes to the slices or the map have
// no effect on a layer.
type Options struct {
	// Weights is the base split ratio in device order (ratios, not counts:
	// [9 1] is [0.9 0.1]). A zero leaves that device idle. Nil means equal.
	Weights []float64
	// OperationWeights overrides Weights per operation: an exact key
	// ("trace_reflections:4") beats its family ("trace_reflections") beats
	// Weights. intersect_full and intersect_reduced share family "intersect".
	OperationWeights map[string][]float64
	// AllowNoPeerAccess accepts remotes without bidirectional peer access to
	// the master (copies are then host-staged and the overlap model does
	// not hold).
	AllowNoPeerAccess bool
	// AllowHeterogeneous accepts devices of different models or compute
	// capabilities; there is then no cross-device bitwise guarantee.
	AllowHeterogeneous bool
	// AllowSameDevice accepts a device list that names a device more than
	// once (WithDevices(0, 0)): each position gets its own replica, with
	// its own streams and structures, and every position but the master's
	// is driven as a remote (scatter, launch, gather, fold), so the whole
	// replicated path runs on one GPU. It is meant for tests and diagnosis:
	// it measures the layer's fixed cost, never a speedup.
	AllowSameDevice bool
	// SkipWarmUp asks the replica builder to skip the per-device warm-up
	// it otherwise runs at every build; the layer only carries it.
	SkipWarmUp bool
	// ChunkRays is an explicit number of rows (lanes) per launch; it engages
	// the chunked executor at every batch size.
	ChunkRays int
	// MemoryBudgetBytes bounds the estimated incremental peak memory per
	// device; it engages the chunked executor.
	MemoryBudgetBytes int64
	// Offload streams per_ray results: it is called once per chunk, in issue
	// order (ascending rows per device, interleaved across devices), with the
	// chunk's first row and the operation's own result record for just those
	// rows, and the operation then returns the zero result. The records:
	// *geom.Hits (intersect), *geom.Reflections (trace_reflections), []bool
	// (visible, visible_edge), *geom.PairVisibility (visible_pair),
	// *geom.ChainVisibility (visible_chain), *edge.PointResult,
	// *edge.RayResult and *edge.TopK (the nearest-edge queries), and for the
	// backward passes *IntersectGrads, *EdgePointGrads and *EdgeRayGrads,
	// whose Vertices hold the chunk's partial sum (the caller adds them). An error stops the
	// call and is returned. It engages the chunked executor; grid_reduce
	// operations ignore it. It runs on the calling goroutine, between
	// chunks, and must not call back into the layer. Use OffloadAs for a
	// typed hook.
	Offload func(startRow int, chunk any) error
	// DisablePipeline makes multi-device per_ray calls issue one launch per
	// shard ("sharded") instead of the pipelined executor.
	DisablePipeline bool
	// PipelineChunksPerDevice is the number of chunks the widest shard is
	// cut into by the pipelined executor; 0 means 4, and it must be ≥ 2.
	PipelineChunksPerDevice int
	// MinRaysPerDevice is the baseline row floor of each remote per_ray
	// shard, scaled by the operation's transfer width; 0 means 262144.
	MinRaysPerDevice int
	// MinLanesPerDevice is the lane floor of each remote grid_reduce
	// window; 0 means 262144.
	MinLanesPerDevice int
	// Transfer selects how per_ray rows reach remote replicas: the zero
	// value (TransferAuto) chooses per call; the others force a path for
	// tests and diagnosis (DispatchRecord.Path says which one ran).
	Transfer Transfer
}

// OffloadAs adapts a hook typed for one result record (for instance
// func(int, *geom.Hits) error) to Options.Offload. A chunk of any other type
// is reported as an error that stops the call.
func OffloadAs[T any](hook func(startRow int, chunk T) error) func(int, any) error {
	return func(start int, chunk any) error {
		v, ok := chunk.(T)
		if !ok {
			var want T
			return fmt.Errorf("shard: offload hook expects %T, got %T", want, chunk)
		}
		return hook(start, v)
	}
}

// isZero reports whether no field is set.
func (o *Options) isZero() bool {
	return o.Weights == nil && o.OperationWeights == nil && !o.AllowNoPeerAccess && !o.AllowHeterogeneous && !o.AllowSameDevice &&
		!o.SkipWarmUp && o.ChunkRays == 0 && o.MemoryBudgetBytes == 0 && o.Offload == nil &&
		!o.DisablePipeline && o.PipelineChunksPerDevice == 0 && o.MinRaysPerDevice == 0 && o.MinLanesPerDevice == 0 &&
		o.Transfer == TransferAuto
}

// chunking reports whether a chunking knob is set (a memory contract).
func (o *Options) chunking() bool {
	return o.ChunkRays > 0 || o.MemoryBudgetBytes > 0 || o.Offload != nil
}

// normalize validates o against n devices (spec steps 4 to 7, in order) and
// returns a copy with the defaults filled in and the weights copied.
func (o Options) normalize(n int) (Options, error) {
	var err error
	if o.Weights != nil {
		if o.Weights, err = normalizeWeights("Weights", o.Weights, n); err != nil {
			return o, err
		}
	}
	if o.OperationWeights != nil {
		keys := make([]string, 0, len(o.OperationWeights))
		for k := range o.OperationWeights {
			keys = append(keys, k)
		}
		slices.Sort(keys) // first failure wins: make "first" deterministic
		ow := make(map[string][]float64, len(keys))
		for _, k := range keys {
			if strings.TrimSpace(k) == "" {
				return o, &OptionError{Field: "OperationWeights", Reason: "keys must be non-empty strings"}
			}
			if ow[k], err = normalizeWeights(fmt.Sprintf("OperationWeights[%q]", k), o.OperationWeights[k], n); err != nil {
				return o, err
			}
		}
		o.OperationWeights = ow
	}
	if o.ChunkRays < 0 {
		return o, atLeast("ChunkRays", int64(o.ChunkRays), 1)
	}
	if o.MemoryBudgetBytes < 0 {
		return o, atLeast("MemoryBudgetBytes", o.MemoryBudgetBytes, 1)
	}
	switch {
	case o.PipelineChunksPerDevice < 0:
		return o, atLeast("PipelineChunksPerDevice", int64(o.PipelineChunksPerDevice), 1)
	case o.PipelineChunksPerDevice == 1:
		return o, &OptionError{Field: "PipelineChunksPerDevice",
			Reason: "must be at least 2 (set DisablePipeline for one launch per shard)"}
	case o.PipelineChunksPerDevice == 0:
		o.PipelineChunksPerDevice = DefaultPipelineChunksPerDevice
	}
	if o.MinRaysPerDevice < 0 {
		return o, atLeast("MinRaysPerDevice", int64(o.MinRaysPerDevice), 1)
	} else if o.MinRaysPerDevice == 0 {
		o.MinRaysPerDevice = DefaultMinRaysPerDevice
	}
	if o.MinLanesPerDevice < 0 {
		return o, atLeast("MinLanesPerDevice", int64(o.MinLanesPerDevice), 1)
	} else if o.MinLanesPerDevice == 0 {
		o.MinLanesPerDevice = DefaultMinLanesPerDevice
	}
	switch o.Transfer {
	case TransferAuto, TransferPeerDirect, TransferCompact, TransferCopy:
	default:
		return o, &OptionError{Field: "Transfer", Reason: fmt.Sprintf("%q is not one of \"\", %q, %q, %q",
			o.Transfer, TransferPeerDirect, TransferCompact, TransferCopy)}
	}
	return o, nil
}

func atLeast(field string, got, lo int64) error {
	return &OptionError{Field: field, Reason: fmt.Sprintf("must be at least %d (0 means the default), got %d", lo, got)}
}

// normalizeWeights checks one weight vector: n entries, each finite and
// non-negative, not all zero. It returns a copy; weights are never
// renormalized (only ratios matter).
func normalizeWeights(field string, w []float64, n int) ([]float64, error) {
	if len(w) != n {
		return nil, &OptionError{Field: field, Reason: fmt.Sprintf("has %d entries but %d devices", len(w), n)}
	}
	sum := 0.0
	for i, x := range w {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return nil, &OptionError{Field: field, Reason: fmt.Sprintf("entry %d is %v: weights must be finite and non-negative", i, x)}
		}
		sum += x
	}
	if sum <= 0 {
		return nil, &OptionError{Field: field, Reason: "weights must not sum to zero"}
	}
	return slices.Clone(w), nil
}
