package rf

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// Sentinel errors. Every validation failure of this package is a
// *ValidationError whose Is method matches exactly one of the sentinels
// below; the rf-specific sentinels (ErrLaneWindow, ErrStateCount,
// ErrCapacity, ErrGrid) additionally match geom.ErrInvalidArgument, so a
// caller that only distinguishes "bad length" from "bad value" can test
// against the two geom sentinels alone.
var (
	// ErrLength is geom.ErrLength: a slice has the wrong length (or does not
	// cover the state count).
	ErrLength = geom.ErrLength
	// ErrInvalidArgument is geom.ErrInvalidArgument: a scalar argument is
	// outside its domain.
	ErrInvalidArgument = geom.ErrInvalidArgument
	// ErrLaneWindow reports a lane window (LaneOffset, LaneCount) outside the
	// lane space of the operation.
	ErrLaneWindow = errors.New("rf: invalid lane window")
	// ErrStateCount reports a logical state count (DfrStates.Count, or the
	// state limit of TraceDfrPaths) that is negative or exceeds the rows of
	// states.edge_index.
	ErrStateCount = errors.New("rf: invalid state count")
	// ErrCapacity reports a lane space, sample count or output capacity that
	// does not fit in int32 (the index type of the device kernels).
	ErrCapacity = errors.New("rf: capacity does not fit in int32")
	// ErrGrid reports an invalid grid: axis outside {0,1,2}, unordered
	// bounds, non-positive resolution or cell area, or a cell count that does
	// not fit in int32.
	ErrGrid = errors.New("rf: invalid grid")
)

// ValidationError is the error returned for every rejected input. Op is the
// RayD operation name ("accum_dfr_direct", "accum_dfr_coherent_direct",
// "accumulate_reflections", "trace_dfr_paths"; "accum_dfr_direct_vjp" for
// the gradient, "lane_window" for ResolveWindow), Field the offending input
// in RayD's spelling ("states.edge_pos", "grid.resolution0", "lane_offset",
// …), Reason the rule it broke (RayD's own message where it has one) and
// Kind the sentinel it matches.
type ValidationError struct {
	Op     string
	Field  string
	Reason string
	Kind   error
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("rf: %s: %s: %s", e.Op, e.Field, e.Reason)
}

// Is reports whether target is the error's Kind, or geom.ErrInvalidArgument
// for the rf-specific kinds.
func (e *ValidationError) Is(target error) bool {
	if target == e.Kind {
		return true
	}
	return target == ErrInvalidArgument && e.Kind != ErrLength && e.Kind != ErrInvalidArgument
}

func newErr(op, field string, kind error, format string, args ...any) *ValidationError {
	return &ValidationError{Op: op, Field: field, Reason: fmt.Sprintf(format, args...), Kind: kind}
}
