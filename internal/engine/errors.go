package engine

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsupported matches every *UnsupportedError: the engine cannot
	// run the operation (it never answers through another backend).
	ErrUnsupported = errors.New("rayd: operation not supported by this engine")
	// ErrBackendUnavailable matches a backend that cannot run here (no
	// driver, no device) and a device fast path asked of the CPU engine.
	ErrBackendUnavailable = errors.New("rayd: backend unavailable")
)

// UnsupportedError is an operation an engine cannot run.
type UnsupportedError struct {
	// Engine is Engine.Describe of the refusing engine.
	Engine string
	// Operation is the operation's name.
	Operation string
	// Reason says why, when there is more to say.
	Reason string
	// Unavailable also matches ErrBackendUnavailable (the operation needs
	// a GPU and the engine has none).
	Unavailable bool
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("rayd: %s does not run on %s", e.Operation, e.Engine)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Is matches ErrUnsupported, and ErrBackendUnavailable when Unavailable.
func (e *UnsupportedError) Is(target error) bool {
	return target == ErrUnsupported || (e.Unavailable && target == ErrBackendUnavailable)
}

// Unsupported returns the refusal of operation op by engine.
func Unsupported(engine, op, reason string) error {
	return &UnsupportedError{Engine: engine, Operation: op, Reason: reason}
}

// NeedsGPU returns the refusal of a device operation by an engine without
// a device; it matches ErrUnsupported and ErrBackendUnavailable.
func NeedsGPU(engine, op string) error {
	return &UnsupportedError{Engine: engine, Operation: op, Reason: "it needs a CUDA device", Unavailable: true}
}
