package multidevice

import "errors"

var (
	// ErrInvalidOptions rejects the benchmark's parameters.
	ErrInvalidOptions = errors.New("multidevice: invalid options")
	// ErrMismatch reports a multi-device result that is not the
	// single-device result (a per_ray row not bitwise equal, a grid beyond
	// float32 summation order).
	ErrMismatch = errors.New("multidevice: multi-device result differs from one device")
)
