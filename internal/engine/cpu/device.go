package cpu

import (
	"context"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// The CPU engine has no device: every fast path is refused, and it has no
// multi-device layer.

// FastDevice is refused.
func (e *Engine) FastDevice() (*launch.Device, error) {
	return nil, engine.NeedsGPU("cpu", "device buffers")
}

// WithStream is refused.
func (e *Engine) WithStream(context.Context, func(*launch.Stream) error) error {
	return engine.NeedsGPU("cpu", "device buffers")
}

// IntersectInto is refused.
func (e *Engine) IntersectInto(context.Context, engine.DeviceRays, geom.Flags, engine.DeviceHits) error {
	return engine.NeedsGPU("cpu", "IntersectInto")
}

// TraceReflectionsInto is refused.
func (e *Engine) TraceReflectionsInto(context.Context, engine.DeviceRays, int, engine.DeviceReflections) error {
	return engine.NeedsGPU("cpu", "TraceReflectionsInto")
}

// VisibleInto is refused.
func (e *Engine) VisibleInto(context.Context, engine.DeviceRays, *launch.Buffer[uint8]) error {
	return engine.NeedsGPU("cpu", "VisibleInto")
}

// IntersectVJPInto is refused.
func (e *Engine) IntersectVJPInto(context.Context, engine.DeviceRays, engine.DeviceTape, engine.DeviceCotangents, engine.DeviceGrads) error {
	return engine.NeedsGPU("cpu", "IntersectVJPInto")
}

// Memory is nil: nothing lives on a device.
func (e *Engine) Memory() []engine.Memory { return nil }

// ResetPeak does nothing.
func (e *Engine) ResetPeak() {}

// Devices is nil.
func (e *Engine) Devices() []int { return nil }

// LastDispatch is nil: there is no layer.
func (e *Engine) LastDispatch() *shard.DispatchRecord { return nil }

// LastChunkPlan is nil: there is no layer.
func (e *Engine) LastChunkPlan() *shard.ChunkPlan { return nil }

// Weights is [1].
func (e *Engine) Weights(string) ([]float64, error) { return []float64{1}, nil }

// Calibration is absent.
func (e *Engine) Calibration() (engine.Calibration, bool) { return nil, false }
