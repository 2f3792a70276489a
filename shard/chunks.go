package shard

import "fmt"

// Source says where a chunk size came from.
type Source string

// The chunk size sources of a ChunkPlan.
const (
	// SourceRequested: Options.ChunkRays.
	SourceRequested Source = "requested"
	// SourceBudget: the largest chunk that Options.MemoryBudgetBytes holds.
	SourceBudget Source = "budget"
	// SourceShard: no size was asked for; a chunk is a whole shard.
	SourceShard Source = "shard"
	// SourcePipeline: the pipelined executor's automatic size.
	SourcePipeline Source = "pipeline"
)

// ChunkPlan is the debug record of a chunked, pipelined or sharded call
// (Layer.LastChunkPlan).
type ChunkPlan struct {
	// Operation is the operation key.
	Operation string `json:"operation"`
	// TotalRows is the batch size (lane count for grid_reduce).
	TotalRows int `json:"total_rows"`
	// ChunkRays is the rows per chunk (the remote chunk when pipelined).
	ChunkRays int `json:"chunk_rays"`
	// MasterChunkRays is the master's chunk when it differs (pipelined).
	MasterChunkRays int `json:"master_chunk_rays,omitempty"`
	// Source says where ChunkRays came from.
	Source Source `json:"source"`
	// RowBytes is the per-row cost charged to memory.
	RowBytes int `json:"row_bytes"`
	// BudgetBytes is Options.MemoryBudgetBytes, nil when unset.
	BudgetBytes *int64 `json:"budget_bytes"`
	// ResidentChunks is the number of chunks per device charged at once.
	ResidentChunks int `json:"resident_chunks"`
	// FixedOutputBytes is the reserved returned output (or grid payload).
	FixedOutputBytes int64 `json:"fixed_output_bytes"`
	// ChunkCount is the number of launches, summed over shards.
	ChunkCount int `json:"chunk_count"`
	// MeasuredRowBytes is the output bytes per row of the first retired
	// non-empty chunk; nil before one retired and for grid plans.
	MeasuredRowBytes *int `json:"measured_row_bytes"`
}

// ChunkRequest is the input of SizeChunk.
type ChunkRequest struct {
	// Operation names the operation in errors.
	Operation string
	// Rows is the number of rows (lanes) to cover.
	Rows int
	// RowBytes is the cost of one row.
	RowBytes int
	// ChunkRays is an explicit size (0: none).
	ChunkRays int
	// Budget is the memory budget in bytes (0: none).
	Budget int64
	// Resident is the number of chunks charged at once.
	Resident int
	// Fixed is reserved before any chunk (0: none).
	Fixed int64
}

// need is the estimated bytes of a plan with chunks of size rows.
func (r ChunkRequest) need(size int) int64 {
	return r.Fixed + int64(size)*int64(r.RowBytes)*int64(r.Resident)
}

// SizeChunk picks the rows per chunk (spec §6.1): an explicit ChunkRays wins
// (clamped to Rows when Rows > 0) and is checked against a budget; a budget
// alone gives the largest chunk with Fixed + chunk·RowBytes·Resident ≤
// Budget (at least one row must fit); neither gives a whole shard. The
// result is at least 1. A row costs at least one byte (RowBytes 0 is
// charged as 1) and Resident must be at least 1; a negative field or a
// Resident below 1 is a *PlanError (ErrInvalidPlan, geom.ErrInvalidArgument).
// Budget refusals are *BudgetError values.
func SizeChunk(r ChunkRequest) (int, Source, error) {
	r, err := checkRequest(r)
	if err != nil {
		return 0, "", err
	}
	switch {
	case r.ChunkRays > 0:
		size := r.ChunkRays
		if r.Rows > 0 {
			size = min(size, r.Rows)
		}
		if r.Budget > 0 && r.need(size) > r.Budget {
			return 0, "", &BudgetError{Operation: r.Operation, Required: r.need(size), Budget: r.Budget,
				Reason: fmt.Sprintf("ChunkRays %d requires an estimated %d bytes (%d resident chunks of %d bytes per row) exceeding the budget",
					r.ChunkRays, r.need(size), r.Resident, r.RowBytes)}
		}
		return max(size, 1), SourceRequested, nil
	case r.Budget > 0:
		per := int64(r.RowBytes) * int64(r.Resident)
		if r.Budget-r.Fixed < per {
			reason := fmt.Sprintf("at least %d bytes are required for one row", r.Fixed+per)
			if r.Fixed > 0 {
				reason += fmt.Sprintf(" after reserving %d bytes of fixed returned output; stream it with Offload or raise the budget", r.Fixed)
			}
			return 0, "", &BudgetError{Operation: r.Operation, Required: r.Fixed + per, Budget: r.Budget, Reason: reason}
		}
		size := int(max((r.Budget-r.Fixed)/per, 1))
		if r.Rows > 0 {
			size = min(size, r.Rows)
		}
		return size, SourceBudget, nil
	}
	return max(r.Rows, 1), SourceShard, nil
}

// alignLaneChunk applies the warp rule of grid_reduce chunks (spec §7.1
// step 4): a budget-derived chunk smaller than the window rounds down to a
// whole warp (none fitting is an error); any other size rounds up and is
// capped at the window; with a budget the aligned size is checked again.
// r must have passed SizeChunk.
func alignLaneChunk(size int, src Source, r ChunkRequest) (int, error) {
	r.RowBytes = max(r.RowBytes, 1)
	count := r.Rows
	if src == SourceBudget && size > 0 && size < count {
		size = size / WarpLanes * WarpLanes
		if size == 0 {
			req := r.need(min(count, WarpLanes))
			return 0, &BudgetError{Operation: r.Operation, Required: req, Budget: r.Budget,
				Reason: fmt.Sprintf("the budget cannot hold one warp-aligned lane chunk; at least %d bytes are required", req)}
		}
	} else {
		size = (size + WarpLanes - 1) / WarpLanes * WarpLanes
		if count > 0 {
			size = min(size, count)
		}
	}
	if r.Budget > 0 && r.need(min(size, count)) > r.Budget {
		return 0, &BudgetError{Operation: r.Operation, Required: r.need(min(size, count)), Budget: r.Budget,
			Reason: fmt.Sprintf("the warp-aligned lane chunk requires an estimated %d bytes (%d lanes)", r.need(min(size, count)), size)}
	}
	return size, nil
}
