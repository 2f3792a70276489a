package rayd

import (
	"fmt"
	"log/slog"
)

// Backend selects what runs a Scene's queries.
type Backend string

const (
	// BackendAuto picks the faster GPU backend for the device (see
	// AutoBackend) when a device can be opened, else the CPU reference
	// (with a warning).
	BackendAuto Backend = "auto"
	// BackendCUDA is rayd-go's GPU BVH on one CUDA device.
	BackendCUDA Backend = "cuda"
	// BackendOptiX is NVIDIA OptiX (libnvoptix, ABI 105) on one CUDA device.
	BackendOptiX Backend = "optix"
	// BackendCPU is the pure-Go reference implementation.
	BackendCPU Backend = "cpu"
)

type config struct {
	backend   Backend
	device    int
	logger    *slog.Logger
	devices   []int               // WithDevices (nil: not given)
	multi     *MultiDeviceOptions // WithMultiDevice
	source    ReplicaSource       // WithReplicaSource
	instances []Instance          // WithInstances (nil: a mesh-only scene)
}

// Option configures NewScene.
type Option func(*config) error

// WithBackend selects the backend (default BackendAuto).
func WithBackend(b Backend) Option {
	return func(c *config) error {
		switch b {
		case BackendAuto, BackendCUDA, BackendOptiX, BackendCPU:
			c.backend = b
			return nil
		}
		return fmt.Errorf("%w: unknown backend %q", ErrInvalidArgument, b)
	}
}

// WithDevice selects the CUDA device ordinal (default 0).
func WithDevice(ordinal int) Option {
	return func(c *config) error {
		if ordinal < 0 {
			return fmt.Errorf("%w: device ordinal %d", ErrInvalidArgument, ordinal)
		}
		c.device = ordinal
		return nil
	}
}

// WithLogger sets the logger for backend selection and warnings (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}
