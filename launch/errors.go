package launch

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by any use of a closed device, stream, event,
	// buffer or kernel.
	ErrClosed = errors.New("launch: use of closed resource")
	// ErrWrongDevice is returned when a buffer, stream or event of one
	// device is used with another.
	ErrWrongDevice = errors.New("launch: resource belongs to another device")
	// ErrArgument is returned when kernel arguments do not match the
	// entry point's parameter layout in the PTX manifest.
	ErrArgument = errors.New("launch: kernel argument mismatch")
	// ErrLength is returned when a host slice and a device buffer disagree
	// in length.
	ErrLength = errors.New("launch: length mismatch")
)

// ArgError describes a kernel argument that does not fit its parameter.
type ArgError struct {
	Kernel string // module.entry
	Index  int    // parameter index, or -1 for a count mismatch
	Param  string // parameter name from the CUDA source
	Want   string // what the layout expects
	Got    string // what was passed
}

func (e *ArgError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("launch: %s: %s arguments expected, got %s", e.Kernel, e.Want, e.Got)
	}
	return fmt.Sprintf("launch: %s: argument %d (%s): want %s, got %s", e.Kernel, e.Index, e.Param, e.Want, e.Got)
}

// Is matches ErrArgument.
func (e *ArgError) Is(target error) bool { return target == ErrArgument }

// LengthError names a length mismatch.
type LengthError struct {
	What      string
	Want, Got int
}

func (e *LengthError) Error() string {
	return fmt.Sprintf("launch: %s: length %d, want %d", e.What, e.Got, e.Want)
}

// Is matches ErrLength.
func (e *LengthError) Is(target error) bool { return target == ErrLength }
