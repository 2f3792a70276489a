package shard

// The operation catalog: the key of every operation the layer schedules
// (spec §3.1), its class, and (next to its task type) its byte model. The
// replicas of package replica and the simulated devices of internal/simdev
// recognise the tasks by type; weights, calibration records, dispatch
// records and benchmarks name them by these keys.
const (
	// OpIntersectFull is intersect with any geometric, shading or uv field
	// (per_ray; weight family "intersect").
	OpIntersectFull = "intersect_full"
	// OpIntersectReduced is intersect with t alone (per_ray; weight family
	// "intersect").
	OpIntersectReduced = "intersect_reduced"
	// OpTraceReflections is trace_reflections; its key carries the bounce
	// count ("trace_reflections:4").
	OpTraceReflections = "trace_reflections"
	// OpVisible is visible (per_ray).
	OpVisible = "visible"
	// OpVisiblePair, OpVisibleEdge and OpVisibleChain are the visibility
	// variants (per_ray over their rows; each row expands to a fixed
	// number of segments).
	OpVisiblePair  = "visible_pair"
	OpVisibleEdge  = "visible_edge"
	OpVisibleChain = "visible_chain"
	// OpNearestEdge, OpNearestEdgeRay and OpNearestEdges are the
	// nearest-edge queries (per_ray); the top-k key carries k
	// ("nearest_edges:3").
	OpNearestEdge    = "nearest_edge"
	OpNearestEdgeRay = "nearest_edge_ray"
	OpNearestEdges   = "nearest_edges"
	// OpIntersectVJP, OpNearestEdgeVJP and OpNearestEdgeRayVJP are the
	// backward passes: their rows are per_ray and their vertex gradients
	// are partial sums added on the master in row-chunk order.
	OpIntersectVJP      = "intersect_vjp"
	OpNearestEdgeVJP    = "nearest_edge_vjp"
	OpNearestEdgeRayVJP = "nearest_edge_ray_vjp"
	// OpAccumDfrDirect is accum_dfr_direct, a grid_reduce operation over
	// the D+K+X Monte-Carlo lanes.
	OpAccumDfrDirect = "accum_dfr_direct"
	// OpAccumDfrCoherentDirect is accum_dfr_coherent_direct, a grid_reduce
	// operation over the S·C (state, cell) lanes.
	OpAccumDfrCoherentDirect = "accum_dfr_coherent_direct"
	// OpAccumulateReflections is accumulate_reflections, a grid_reduce
	// operation over the rows of a ray batch.
	OpAccumulateReflections = "accumulate_reflections"
	// OpTraceDfrPaths is trace_dfr_paths, a source_lane operation over
	// transmitter blocks.
	OpTraceDfrPaths = "trace_dfr_paths"
)
