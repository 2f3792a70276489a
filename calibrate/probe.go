package calibrate

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/rayd-go/rayd/geom"
)

// Probe runs and times the calibration workload. Calibrate never reads a
// clock for a measurement: it only decides what to time, in which order,
// and what the times mean. Each call runs the workload once and returns its
// duration; a duration ≤ 0 means "no timing" (the throughput stage then
// gives that device no rate). Calls come from one goroutine, one at a time.
//
// A CUDA implementation builds its inputs once per device and caches them
// (the copy to a device is never timed), synchronizes the device(s)
// involved, records a start event on the master's (or the device's) stream,
// runs the operation, records a stop event after the result is complete
// and returns cuEventElapsedTime, after synchronizing again. TimeDispatch
// runs the real multi-device dispatch at the weights it is given: typically
// through a calibration layer planned over the same devices with the
// scene's options but MinRaysPerDevice 1 (so that the small-work floor does
// not turn every rung into the same master run), built from the scene's
// already-built replicas (a Builder returning them, their Close left to the
// scene), with the weights stored under the probe's operation key by
// shard.Layer.SetOperationWeights before shard.RunRows.
type Probe interface {
	// TimeReplica runs the workload on device's replica alone, its inputs
	// already resident on that device, and returns the device time.
	TimeReplica(ctx context.Context, device int) (time.Duration, error)
	// TimeDispatch runs the workload through the multi-device dispatch at
	// weights (one per device, in the layer's device order, not
	// normalized; zero remote weights mean the master alone) and returns
	// the time from the first enqueue to the completion of the result on
	// the master.
	TimeDispatch(ctx context.Context, weights []float64) (time.Duration, error)
}

// ProbeFuncs adapts two functions to Probe.
type ProbeFuncs struct {
	Replica  func(ctx context.Context, device int) (time.Duration, error)
	Dispatch func(ctx context.Context, weights []float64) (time.Duration, error)
}

// TimeReplica calls f.Replica.
func (f ProbeFuncs) TimeReplica(ctx context.Context, device int) (time.Duration, error) {
	return f.Replica(ctx, device)
}

// TimeDispatch calls f.Dispatch.
func (f ProbeFuncs) TimeDispatch(ctx context.Context, weights []float64) (time.Duration, error) {
	return f.Dispatch(ctx, weights)
}

// builtIn marks the built-in probe.
type builtIn struct{ Probe }

// BuiltIn marks p as the built-in probe: the default workload (the rays of
// DefaultRays through full intersect, every field returned, or through
// trace_reflections with Options.MaxBounces bounces), which measures
// DefaultOperation(Options.MaxBounces) and may not be stored under any
// other operation (ErrRelabelledProbe). The public
// package passes its built-in probe through BuiltIn when the caller gives
// none; any other probe is a custom probe, which must name its operation.
func BuiltIn(p Probe) Probe {
	if p == nil {
		return nil
	}
	return builtIn{p}
}

// DefaultRows is the default probe batch, 1<<20 rows.
const DefaultRows = 1 << 20

// DefaultSeed seeds the rays of the default probe (RayD's seed; the bit
// stream is math/rand/v2's PCG, not torch's generator).
const DefaultSeed = 0x2026072D

// DefaultOperation is the operation the built-in probe measures:
// "trace_reflections:<b>" for b > 0 bounces, else "intersect_full".
func DefaultOperation(maxBounces int) string {
	if maxBounces > 0 {
		return "trace_reflections:" + strconv.Itoa(maxBounces)
	}
	return "intersect_full"
}

// DefaultRays draws the default probe's rows rays from DefaultSeed, inside
// the bounding box of mesh (the master's first mesh): origins uniform in
// low + [0,1)³·span with span = max(high − low, 1e-3) per axis, directions
// standard normal, normalized with the norm clamped at 1e-12. The rays are
// generated on the host once; a probe copies them to each device once.
func DefaultRays(mesh geom.Mesh, rows int) (o, d []float32) {
	low := [3]float32{}
	high := [3]float32{}
	for a := range 3 {
		low[a], high[a] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	for i := 0; i+2 < len(mesh.Vertices); i += 3 {
		for a := range 3 {
			low[a] = min(low[a], mesh.Vertices[i+a])
			high[a] = max(high[a], mesh.Vertices[i+a])
		}
	}
	if len(mesh.Vertices) < 3 {
		low, high = [3]float32{}, [3]float32{}
	}
	var span [3]float32
	for a := range 3 {
		span[a] = max(high[a]-low[a], 1e-3)
	}
	r := rand.New(rand.NewPCG(DefaultSeed, 0))
	rows = max(rows, 0)
	o, d = make([]float32, 3*rows), make([]float32, 3*rows)
	for i := range rows {
		for a := range 3 {
			o[3*i+a] = r.Float32()*span[a] + low[a]
		}
	}
	for i := range rows {
		var n float64
		for a := range 3 {
			v := r.NormFloat64()
			d[3*i+a] = float32(v)
			n += v * v
		}
		n = max(math.Sqrt(n), 1e-12)
		for a := range 3 {
			d[3*i+a] = float32(float64(d[3*i+a]) / n)
		}
	}
	return o, d
}
