package main

// The operations of the benchmark's rows.
const (
	opIntersect = "intersect"
	opReflect   = "trace_reflections(1)"
	opVisible   = "visible"
	opAccum     = "accum_dfr_direct"
)

// target is the bound a row is held to: the overhead of the replicated call
// over the single-device call (nil: no bound) and the driver calls of the
// replicated call.
type target struct {
	OverheadMS  *float64 `json:"overhead_ms"`
	DriverCalls int64    `json:"driver_calls"`
}

// overheadTargets are the overhead bounds of the multi-device work's
// specification, by configuration and operation, in milliseconds.
var overheadTargets = map[string]float64{
	"light/" + opIntersect:   0.05,
	"light/" + opReflect:     0.05,
	"light/" + opAccum:       0.02,
	"compute/" + opIntersect: 0.10,
	"compute/" + opAccum:     0.05,
}

// Driver calls per call of the specification: per_ray queries and the
// accumulation.
const (
	perRayCallLimit = 20
	accumCallLimit  = 30
)

// targetFor is the bound of op on config: the specification's overhead
// bound where it sets one, and the driver-call limit of the operation.
func targetFor(config, op string) target {
	t := target{DriverCalls: perRayCallLimit}
	if op == opAccum {
		t.DriverCalls = accumCallLimit
	}
	if ms, ok := overheadTargets[config+"/"+op]; ok {
		t.OverheadMS = &ms
	}
	return t
}
