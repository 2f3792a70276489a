package rayd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rayd-go/rayd/launch"
)

// WarmUpOps are the operations WarmUp runs by default (and the only ones it
// knows): the contract's warm-up set.
var WarmUpOps = []string{"intersect", "trace_reflections", "nearest_edge"}

// WarmUp pays each device's first-use costs before any timed or
// latency-sensitive work (multidevice spec §9.1): on one goroutine per
// device, all at once, it builds a throwaway one-triangle scene on the
// device's best backend (so the kernel modules are loaded and JIT-compiled
// into the driver's cache, and on GPUs with RT cores the OptiX context and
// pipelines are built), runs each of ops once (default WarmUpOps), drops
// the scene and records the wall time. It returns the times in the order
// of devices.
//
// Errors: a duplicate, negative or out-of-range ordinal, or an unknown
// operation, is ErrInvalidArgument (checked before any device is touched);
// no CUDA driver or device is ErrBackendUnavailable; a device that fails is
// "rayd: warm-up failed on cuda:<i>: <cause>" for the first failing device
// in the given order. An empty device list or op list does nothing.
func WarmUp(ctx context.Context, devices []int, ops ...string) ([]time.Duration, error) {
	if ops == nil {
		ops = WarmUpOps
	}
	for _, op := range ops {
		if !slices.Contains(WarmUpOps, op) {
			return nil, fmt.Errorf("%w: warm-up operation %q (supported: %v)", ErrInvalidArgument, op, WarmUpOps)
		}
	}
	for i, d := range devices {
		if d < 0 || slices.Contains(devices[:i], d) {
			return nil, fmt.Errorf("%w: warm-up devices %v: negative or duplicate ordinal %d", ErrInvalidArgument, devices, d)
		}
	}
	if len(devices) == 0 || len(ops) == 0 {
		return []time.Duration{}, ctx.Err()
	}
	n, err := launch.Count()
	if err != nil {
		return nil, fmt.Errorf("%w: warm-up needs CUDA: %w", ErrBackendUnavailable, err)
	}
	for _, d := range devices {
		if d >= n {
			return nil, fmt.Errorf("%w: warm-up device %d out of range (%d visible)", ErrInvalidArgument, d, n)
		}
	}
	times := make([]time.Duration, len(devices))
	errs := make([]error, len(devices))
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Go(func() {
			start := time.Now()
			errs[i] = warmDevice(ctx, d, ops)
			times[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("rayd: warm-up failed on cuda:%d: %w", devices[i], err)
		}
	}
	return times, nil
}

// warmDevice runs ops once on a one-triangle scene of device d.
func warmDevice(ctx context.Context, d int, ops []string) (err error) {
	tri := Mesh{Vertices: []float32{-1, -1, 0, 1, -1, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	s, err := NewScene(ctx, []Mesh{tri}, WithBackend(AutoBackend(d)), WithDevice(d))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	ray := Rays{Origins: []float32{0, 0, -1}, Directions: []float32{0, 0, 1}}
	for _, op := range ops {
		switch op {
		case "intersect":
			_, err = s.Intersect(ctx, ray, FlagsAll)
		case "trace_reflections":
			_, err = s.TraceReflections(ctx, ray, 1)
		case "nearest_edge":
			_, err = s.NearestEdge(ctx, []float32{0, 0, 0.5})
		}
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	return nil
}
