package calibrate

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, one per loud failure of calibration (multidevice spec
// §13 rows 58 to 64). Every error Calibrate creates matches one of them with
// errors.Is; argument errors come as an *ArgumentError that also matches
// ErrInvalidArgument, probe failures as a *ProbeError that unwraps to the
// probe's own error. Failures of the layer itself (not built, poisoned, a
// refused weight vector) are shard's errors, returned unchanged.
var (
	// ErrNeedsDevices (row 58): no layer, or a layer of one device (a
	// one-device chunked layer included).
	ErrNeedsDevices = errors.New("calibrate: needs a scene with more than one device: " +
		"construct it with devices=[...] listing at least two devices")
	// ErrInvalidArgument matches every *ArgumentError (rows 59 to 63).
	ErrInvalidArgument = errors.New("calibrate: invalid argument")
	// ErrProbeNeedsOperation (row 59): a custom probe without an operation.
	ErrProbeNeedsOperation = errors.New("calibrate: operation=... is required with a custom probe")
	// ErrRelabelledProbe (row 60): the built-in probe asked to store its
	// measurement under another operation than the one it measures.
	ErrRelabelledProbe = errors.New("calibrate: the built-in probe measures its default operation only; " +
		"Pass a custom probe to calibrate another operation")
	// ErrEmptyOperation (row 61): a blank operation name.
	ErrEmptyOperation = errors.New("calibrate: operation must be a non-empty string")
	// ErrNotPositive (row 62): Rows or Repeats below 1.
	ErrNotPositive = errors.New("calibrate: must be at least 1")
	// ErrNegative (row 63): WarmUp or MaxBounces below 0.
	ErrNegative = errors.New("calibrate: must not be negative")
	// ErrNoTime (row 64): the throughput stage measured no time on any
	// device.
	ErrNoTime = errors.New("calibrate: measured no time on any device")
	// ErrProbe matches every *ProbeError.
	ErrProbe = errors.New("calibrate: probe failed")
)

// ArgumentError rejects one argument of Calibrate. Field is the Options
// field ("Operation", "Rows", ...) or "probe"; Kind is the row's sentinel
// (ErrProbeNeedsOperation, ErrRelabelledProbe, ErrEmptyOperation,
// ErrNotPositive, ErrNegative) or nil for an argument outside the table.
type ArgumentError struct {
	Field  string
	Reason string
	Kind   error
}

// Error implements error.
func (e *ArgumentError) Error() string {
	return "calibrate: " + e.Field + ": " + e.Reason
}

// Is reports whether target is ErrInvalidArgument or the error's Kind.
func (e *ArgumentError) Is(target error) bool {
	return target == ErrInvalidArgument || (e.Kind != nil && target == e.Kind)
}

// ProbeError wraps the failure of one probe call. Stage is "throughput"
// (TimeReplica on Device) or "refine" (TimeDispatch at Weights).
type ProbeError struct {
	Operation string
	Stage     string
	Device    int
	Weights   []float64
	Err       error
}

// Error implements error.
func (e *ProbeError) Error() string {
	if e.Stage == stageThroughput {
		return fmt.Sprintf("calibrate: %s probe on cuda:%d (throughput stage): %v", e.Operation, e.Device, e.Err)
	}
	return fmt.Sprintf("calibrate: %s probe at weights %s (refinement stage): %v", e.Operation, formatWeights(e.Weights), e.Err)
}

// Is reports whether target is ErrProbe.
func (e *ProbeError) Is(target error) bool { return target == ErrProbe }

// Unwrap returns the probe's own error.
func (e *ProbeError) Unwrap() error { return e.Err }

const (
	stageThroughput = "throughput"
	stageRefine     = "refine"
)

// formatWeights spells weights as RayD's describe() does: [1.0000, 0.2500].
func formatWeights(w []float64) string {
	parts := make([]string, len(w))
	for i, x := range w {
		parts[i] = fmt.Sprintf("%.4f", x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
