package cuda

import (
	"context"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// FastDevice is the engine's device.
func (e *Engine) FastDevice() (*launch.Device, error) { return e.dev, nil }

// WithStream runs fn on a slot's stream and waits for it.
func (e *Engine) WithStream(ctx context.Context, fn func(*launch.Stream) error) error {
	return e.onSlot(ctx, func(sl *slot) error {
		if err := fn(sl.s); err != nil {
			_ = sl.s.Synchronize()
			return err
		}
		return sl.s.Synchronize()
	})
}

// fast runs a device fast path on a slot: the launch with the slot's
// persistent-launch counter, then the wait.
func (e *Engine) fast(ctx context.Context, r engine.DeviceRays, run func(t tracer, st *launch.Stream, r accel.Rays) error) error {
	return e.onSlot(ctx, func(sl *slot) error {
		ar := RaysOf(r)
		ar.Counter = sl.counter
		if err := run(e.tr, sl.s, ar); err != nil {
			return err
		}
		return sl.s.Synchronize()
	})
}

// IntersectInto runs intersect on device rays into out.
func (e *Engine) IntersectInto(ctx context.Context, r engine.DeviceRays, flags geom.Flags, out engine.DeviceHits) error {
	return e.fast(ctx, r, func(t tracer, st *launch.Stream, ar accel.Rays) error {
		return t.Intersect(st, ar, flags, HitsOf(out))
	})
}

// TraceReflectionsInto runs trace_reflections on device rays into out.
func (e *Engine) TraceReflectionsInto(ctx context.Context, r engine.DeviceRays, bounces int, out engine.DeviceReflections) error {
	return e.fast(ctx, r, func(t tracer, st *launch.Stream, ar accel.Rays) error {
		return t.TraceReflections(st, ar, bounces, ReflectionsOf(out))
	})
}

// VisibleInto runs visible on device segments into out.
func (e *Engine) VisibleInto(ctx context.Context, r engine.DeviceRays, out *launch.Buffer[uint8]) error {
	return e.fast(ctx, r, func(t tracer, st *launch.Stream, ar accel.Rays) error {
		return t.Visible(st, accel.Segments{Start: ar.O, End: ar.D, Active: ar.Active, N: ar.N, Counter: ar.Counter}, out)
	})
}

// Memory reports the device's allocations through rayd-go.
func (e *Engine) Memory() []engine.Memory {
	cur, peak := e.dev.Allocated()
	return []engine.Memory{{Device: e.dev.Ordinal(), Current: cur, Peak: peak}}
}

// ResetPeak resets the device's high-water mark.
func (e *Engine) ResetPeak() { e.dev.ResetPeak() }

// Devices is the engine's device.
func (e *Engine) Devices() []int { return []int{e.dev.Ordinal()} }

// LastDispatch is nil: there is no layer.
func (e *Engine) LastDispatch() *shard.DispatchRecord { return nil }

// LastChunkPlan is nil: there is no layer.
func (e *Engine) LastChunkPlan() *shard.ChunkPlan { return nil }

// Weights is [1].
func (e *Engine) Weights(string) ([]float64, error) { return []float64{1}, nil }

// Calibration is absent: one device has nothing to split.
func (e *Engine) Calibration() (engine.Calibration, bool) { return nil, false }
