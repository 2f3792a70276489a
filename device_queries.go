package rayd

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// DeviceReflections is a device-resident trace_reflections record for N rows
// and Bounces slots per row (slot i·Bounces+b). ImageSources may be nil.
type DeviceReflections struct {
	N, Bounces   int
	Valid        *Buffer[uint8]
	T            *Buffer[float32]
	PrimIDs      *Buffer[int32]
	ImageSources *Buffer[float32]
}

// Close frees the buffers. Idempotent.
func (r *DeviceReflections) Close() error {
	return closeAll(r.Valid, r.T, r.PrimIDs, r.ImageSources)
}

// AllocReflections allocates a device record for n rows and maxBounces
// slots; images selects the image-source field (12 more bytes per slot).
func (s *Scene) AllocReflections(n, maxBounces int, images bool) (*DeviceReflections, error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	dev, err := s.fastDevice()
	if err != nil {
		return nil, err
	}
	if n < 0 || maxBounces < 1 {
		return nil, &geom.ArgumentError{Field: "AllocReflections", Reason: fmt.Sprintf("n %d, maxBounces %d", n, maxBounces)}
	}
	return allocReflections(dev, n, maxBounces, images)
}

// allocReflections allocates a reflections record for n rows and
// maxBounces slots on dev.
func allocReflections(dev *launch.Device, n, maxBounces int, images bool) (*DeviceReflections, error) {
	r := &DeviceReflections{N: n, Bounces: maxBounces}
	slots := n * maxBounces
	var err error
	if r.Valid, err = launch.Alloc[uint8](dev, slots); err == nil {
		if r.T, err = launch.Alloc[float32](dev, slots); err == nil {
			if r.PrimIDs, err = launch.Alloc[int32](dev, slots); err == nil && images {
				r.ImageSources, err = launch.Alloc[float32](dev, 3*slots)
			}
		}
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// TraceReflectionsInto is the device fast path of TraceReflections: out
// (from AllocReflections, out.N == rays.N) receives up to out.Bounces
// bounces per ray. It returns once the results are in out.
func (s *Scene) TraceReflectionsInto(ctx context.Context, rays *DeviceRays, out *DeviceReflections) error {
	check := func(dev *launch.Device) error {
		if out == nil || out.N != rays.N || out.Bounces < 1 || out.T == nil {
			return fmt.Errorf("%w: reflections record does not match %d rays", ErrLength, rays.N)
		}
		return sameDevice(dev, "reflections record", out.T.Device())
	}
	rec := func() accel.Reflections {
		return accel.Reflections{Valid: out.Valid, T: out.T, Prim: out.PrimIDs, Images: out.ImageSources}
	}
	return s.fastPath(ctx, rays, check, func(t tracer, st *launch.Stream, r accel.Rays) error {
		return t.TraceReflections(st, r, out.Bounces, rec())
	}, func(ctx context.Context, l *shard.Layer, st *launch.Stream, r accel.Rays, direct func(shard.Replica) error) error {
		return layerRows(ctx, l, &replica.DeviceReflections{Rays: r, Bounces: out.Bounces, Out: rec(), Stream: st}, direct)
	})
}

// VisibleInto is the device fast path of Visible: segments start→end (a
// DeviceRays whose Origins are the starts and Directions the ends, Active
// optional) and out (N bytes, 1 = visible).
func (s *Scene) VisibleInto(ctx context.Context, segments *DeviceRays, out *Buffer[uint8]) error {
	check := func(dev *launch.Device) error {
		if out == nil || out.Len() < segments.N {
			return fmt.Errorf("%w: visibility output shorter than %d segments", ErrLength, segments.N)
		}
		return sameDevice(dev, "visibility output", out.Device())
	}
	return s.fastPath(ctx, segments, check, func(t tracer, st *launch.Stream, r accel.Rays) error {
		seg := accel.Segments{Start: r.O, End: r.D, Active: r.Active, N: r.N, Counter: r.Counter}
		return t.Visible(st, seg, out)
	}, func(ctx context.Context, l *shard.Layer, st *launch.Stream, r accel.Rays, direct func(shard.Replica) error) error {
		seg := accel.Segments{Start: r.O, End: r.D, Active: r.Active, N: r.N}
		return layerRows(ctx, l, &replica.DeviceVisible{Segments: seg, Out: out, Stream: st}, direct)
	})
}
