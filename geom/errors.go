package geom

import (
	"errors"
	"fmt"
)

// Sentinel errors of batch validation.
var (
	// ErrLength is matched (errors.Is) by every *LengthError.
	ErrLength = errors.New("geom: length mismatch")
	// ErrInvalidArgument is matched (errors.Is) by every *ArgumentError.
	ErrInvalidArgument = errors.New("geom: invalid argument")
)

// LengthError reports a batch slice of the wrong length. Field names the
// argument ("o", "d", "tmax", "active", "start", "end"); Got is its length.
// Want is the length it must have, or -1 when the slice defines the row
// count and its length is not a multiple of PerRow.
type LengthError struct {
	Field  string
	Want   int
	Got    int
	PerRow int
}

// Error implements error.
func (e *LengthError) Error() string {
	if e.Want < 0 {
		return fmt.Sprintf("geom: %s has length %d, not a multiple of %d", e.Field, e.Got, e.PerRow)
	}
	return fmt.Sprintf("geom: %s has length %d, want %d (%d per row)", e.Field, e.Got, e.Want, e.PerRow)
}

// Is reports whether target is ErrLength.
func (e *LengthError) Is(target error) bool { return target == ErrLength }

// ArgumentError reports an argument outside its domain.
type ArgumentError struct {
	Field  string
	Reason string
}

// Error implements error.
func (e *ArgumentError) Error() string {
	return fmt.Sprintf("geom: invalid argument %s: %s", e.Field, e.Reason)
}

// Is reports whether target is ErrInvalidArgument.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

// CheckRays validates the slices of a ray batch and returns its row count
// N = len(o)/3: d must have 3N values, tmax N or none, active N or none.
func CheckRays(o, d, tmax []float32, active []bool) (int, error) {
	n, err := rows3("o", o)
	if err != nil {
		return 0, err
	}
	if err := checkLen("d", len(d), n, 3, false); err != nil {
		return 0, err
	}
	if err := checkLen("tmax", len(tmax), n, 1, true); err != nil {
		return 0, err
	}
	if err := checkLen("active", len(active), n, 1, true); err != nil {
		return 0, err
	}
	return n, nil
}

// CheckSegments validates the slices of a segment batch and returns its row
// count N = len(start)/3: end must have 3N values and active N or none.
func CheckSegments(start, end []float32, active []bool) (int, error) {
	n, err := rows3("start", start)
	if err != nil {
		return 0, err
	}
	if err := checkLen("end", len(end), n, 3, false); err != nil {
		return 0, err
	}
	if err := checkLen("active", len(active), n, 1, true); err != nil {
		return 0, err
	}
	return n, nil
}

func rows3(field string, v []float32) (int, error) {
	if len(v)%3 != 0 {
		return 0, &LengthError{Field: field, Want: -1, Got: len(v), PerRow: 3}
	}
	return len(v) / 3, nil
}

func checkLen(field string, got, n, per int, optional bool) error {
	if got == n*per || (optional && got == 0) {
		return nil
	}
	return &LengthError{Field: field, Want: n * per, Got: got, PerRow: per}
}
