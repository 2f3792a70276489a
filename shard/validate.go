package shard

import (
	"errors"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// ErrInvalidPlan matches every *PlanError: a planner entry point was given
// a request it cannot divide (a negative row count, a negative byte model,
// no resident chunk, weights that do not split anything). A *PlanError
// also matches geom.ErrInvalidArgument.
var ErrInvalidPlan = errors.New("shard: invalid plan request")

// PlanError rejects the request of a planner entry point (SizeChunk,
// PlanRows, PlanLanes) before anything is divided by it. Field names the
// request field ("Rows", "RowBytes", "Resident", "Op.FixedBytes", ...).
type PlanError struct {
	Operation string
	Field     string
	Reason    string
}

// Error implements error.
func (e *PlanError) Error() string {
	return fmt.Sprintf("shard: %s: %s: %s", e.Operation, e.Field, e.Reason)
}

// Is reports whether target is ErrInvalidPlan or geom.ErrInvalidArgument.
func (e *PlanError) Is(target error) bool {
	return target == ErrInvalidPlan || target == geom.ErrInvalidArgument
}

// checkRequest validates a ChunkRequest (spec §6.1 as RayD applies it: the
// row cost is clamped to at least one byte, at least one chunk is
// resident) and returns it with the row cost clamped.
func checkRequest(r ChunkRequest) (ChunkRequest, error) {
	bad := func(field string, v int64) error {
		return &PlanError{Operation: r.Operation, Field: field, Reason: fmt.Sprintf("%d, must not be negative", v)}
	}
	switch {
	case r.Rows < 0:
		return r, bad("Rows", int64(r.Rows))
	case r.RowBytes < 0:
		return r, bad("RowBytes", int64(r.RowBytes))
	case r.ChunkRays < 0:
		return r, bad("ChunkRays", int64(r.ChunkRays))
	case r.Budget < 0:
		return r, bad("Budget", r.Budget)
	case r.Fixed < 0:
		return r, bad("Fixed", r.Fixed)
	case r.Resident < 1:
		return r, &PlanError{Operation: r.Operation, Field: "Resident", Reason: fmt.Sprintf("%d, at least one chunk must be resident", r.Resident)}
	}
	r.RowBytes = max(r.RowBytes, 1)
	if _, ok := geom.Bytes(r.RowBytes, r.Resident, max(r.ChunkRays, r.Rows, 1)); !ok {
		return r, &PlanError{Operation: r.Operation, Field: "RowBytes", Reason: "rows × row bytes × resident chunks overflows int64"}
	}
	return r, nil
}

// checkOp validates the byte model of an operation handed to the planner.
func checkOp(op Op) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"Op.RowBytes", int64(op.RowBytes)}, {"Op.ResultRowBytes", int64(op.ResultRowBytes)},
		{"Op.TransferRowBytes", int64(op.TransferRowBytes)}, {"Op.FixedBytes", op.FixedBytes}, {"Op.LaneFloorExtra", int64(op.LaneFloorExtra)}} {
		if f.v < 0 {
			return &PlanError{Operation: op.Key, Field: f.name, Reason: fmt.Sprintf("%d, must not be negative", f.v)}
		}
	}
	return nil
}

// CheckWeights validates a weight vector for n devices exactly as Plan
// validates Options.Weights: n entries, each finite and non-negative, not
// all zero. RowShards and LaneShards divide by the sum of their weights;
// weights that fail this check make them put every row on the master.
// The error is an *OptionError naming field.
func CheckWeights(field string, w []float64, n int) error {
	_, err := normalizeWeights(field, w, n)
	return err
}

// usableWeights returns weights (nil: equal) and whether they pass
// CheckWeights for n devices.
func usableWeights(weights []float64, n int) ([]float64, bool) {
	if weights == nil {
		return equal(n), n > 0
	}
	if len(weights) != n {
		return nil, false
	}
	sum := 0.0
	for _, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, false
		}
		sum += w
	}
	return weights, sum > 0
}

// ValidateOptions checks a device list and options without any topology,
// so that a machine without a GPU (or before the devices are probed) can
// refuse a bad request: options without devices (ErrOptionsWithoutDevices),
// an empty list, duplicate or negative ordinals (*DeviceError), then every
// option field as Plan checks it (*OptionError: Weights, OperationWeights,
// the chunking and the pipeline knobs). A nil device list with zero
// options is valid (no layer). What it cannot know — whether the ordinals
// exist, peer access and device identities — Plan checks against the
// topology afterwards.
func ValidateOptions(devices []int, o Options) error {
	if devices == nil {
		if o.isZero() {
			return nil
		}
		return ErrOptionsWithoutDevices
	}
	if err := checkDevices(devices, nil, o.AllowSameDevice); err != nil && !errors.Is(err, ErrNoDevices) {
		return err
	}
	var neg []int
	for _, d := range devices {
		if d < 0 {
			neg = append(neg, d)
		}
	}
	if len(neg) > 0 {
		return &DeviceError{Devices: neg, Reason: "ordinals must not be negative:"}
	}
	_, err := o.normalize(len(devices))
	return err
}
