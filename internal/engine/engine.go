// Package engine is the one seam between rayd-go's public Scene and the
// backends that run its operations. The root package validates every call
// once, takes the scene's lock and calls exactly one method of an Engine;
// every backend implements every method:
//
//   - engine/cpu runs the pure-Go references (packages ref, edge, rf);
//   - engine/cuda runs one device's kernels (package accel) through its
//     tracer, rayd-go's BVH or OptiX;
//   - engine/replicated runs the replicated multi-device layer (package
//     shard over the replicas of package replica, or any other
//     shard.Replica source such as simulated devices).
//
// An engine that cannot run an operation returns an *UnsupportedError
// naming itself and the operation (matching ErrUnsupported); it never
// answers through another backend the caller did not choose.
//
// Concurrency: the façade holds the scene's lock — shared for queries,
// exclusive for Refit, SetEdgeMask, Rebuild and Close — so an engine
// needs no lock of its own against mutations, only between concurrent
// queries.
//
// Place in the package graph: engine → shard, calibrate, rf, edge, geom,
// launch (types only); the implementations sit one floor up, and the root
// package rayd above them.
package engine

import (
	"context"
	"time"

	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// Rays is a host ray batch: Origins and Directions hold 3 values per row;
// TMax, Active, TMin and Mask are empty or hold one value per row. TMin and
// Mask are the per-ray limits of the traced queries (geom.RayLimits); the
// queries that do not trace triangles never receive them.
type Rays struct {
	Origins, Directions, TMax []float32
	Active                    []bool
	TMin                      []float32
	Mask                      []uint8
}

// Limits returns the batch's per-ray limits.
func (r Rays) Limits() geom.RayLimits { return geom.RayLimits{TMin: r.TMin, Mask: r.Mask} }

// Len returns the row count.
func (r Rays) Len() int { return len(r.Origins) / 3 }

// Edges is the scene's edge table with its mask (the host truth the
// façade keeps) and the mask's generation, which advances with every
// SetEdgeMask: an engine with a device copy refreshes it when the
// generation it last uploaded differs.
type Edges struct {
	Scene *edge.Scene
	Gen   uint64
}

// Engine runs every operation of a Scene. Inputs are validated by the
// façade; an engine may check again where its own invariants need it.
type Engine interface {
	// Describe names where the engine runs ("cpu", "cuda:0 (bvh)",
	// "replicated [0 1]").
	Describe() string

	// Intersect, TraceReflections and Visible are the per_ray queries of
	// operations spec §2–§4.
	Intersect(ctx context.Context, r Rays, flags geom.Flags) (*geom.Hits, error)
	TraceReflections(ctx context.Context, r Rays, bounces int) (*geom.Reflections, error)
	Visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error)

	// VisiblePair, VisibleEdge and VisibleChain answer the visibility
	// variants over a batch expanded by geom.PairSegments, EdgeSegments
	// and ChainSegments.
	VisiblePair(ctx context.Context, b *geom.SegmentBatch) (*geom.PairVisibility, error)
	VisibleEdge(ctx context.Context, b *geom.SegmentBatch) ([]bool, error)
	VisibleChain(ctx context.Context, b *geom.SegmentBatch) (*geom.ChainVisibility, error)

	// The nearest-edge queries (operations spec §5) and their backward
	// passes (§5.7), over the scene's edge table and mask.
	NearestEdge(ctx context.Context, e Edges, points []float32, active []bool) (*edge.PointResult, error)
	NearestEdgeRay(ctx context.Context, e Edges, r Rays) (*edge.RayResult, error)
	NearestEdges(ctx context.Context, e Edges, points []float32, k int, active []bool) (*edge.TopK, error)
	NearestEdgeVJP(ctx context.Context, e Edges, points []float32, gid []int32, g edge.PointCotangent) (*shard.EdgePointGrads, error)
	NearestEdgeRayVJP(ctx context.Context, e Edges, r Rays, gid []int32, g edge.RayCotangent) (*shard.EdgeRayGrads, error)

	// IntersectVJP is the frozen-winner backward pass of intersect (spec
	// §2.2): prim holds the forward's global face ids, uv its (u, v) or nil.
	IntersectVJP(ctx context.Context, r Rays, prim []int32, uv []float32, g geom.IntersectCotangents) (*shard.IntersectGrads, error)

	// The RF operations (spec §6–§7). opt's lane window is already
	// resolved by the façade (LaneCount ≥ 0).
	AccumDfrDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.AccumOptions) (*rf.AccumResult, error)
	AccumDfrCoherentDirect(ctx context.Context, st *rf.DfrStates, g rf.DfrGrid, m *rf.DfrMaterial, active []bool, opt rf.CoherentOptions) (*rf.CoherentResult, error)
	AccumulateReflections(ctx context.Context, rays rf.ReflRays, g rf.AccumGrid, m *rf.ReflMaterial, maxBounces int, opt rf.ReflOptions) (*rf.ReflResult, error)
	TraceDfrPaths(ctx context.Context, tx, rx []float32, st *rf.DfrStates, m *rf.DfrMaterial, active []bool, opt rf.PathOptions) (*rf.DfrPaths, error)

	// Refit makes the engine follow a vertex update of mesh (the façade
	// has already written the vertices into the scene's tables).
	Refit(ctx context.Context, mesh int, vertices []float32) error
	// SetEdgeMask makes the engine follow a mask change (already in the
	// façade's edge table, e.Gen advanced).
	SetEdgeMask(ctx context.Context, e Edges) error
	// Rebuild rebuilds the engine's structures from the scene's current
	// tables: the recovery of a replicated scene poisoned by a failed
	// mutation; a single-device engine rebuilds its acceleration
	// structure.
	Rebuild(ctx context.Context) error

	Closest
	Device
	Multi
	Crossings
	Masks
	Instancing
	Winding

	// Close releases the engine's resources. Called once, under the
	// scene's exclusive lock.
	Close() error
}

// Device is the device-resident fast path: inputs and outputs in buffers
// of the engine's device (the master's on a replicated engine).
type Device interface {
	// FastDevice is the device whose buffers the fast path takes.
	FastDevice() (*launch.Device, error)
	// WithStream runs fn on a stream of that device, for uploads and
	// downloads, and waits for it.
	WithStream(ctx context.Context, fn func(*launch.Stream) error) error
	// IntersectInto, TraceReflectionsInto and VisibleInto run the
	// per_ray queries on device rays into device records and return once
	// the results are in place.
	IntersectInto(ctx context.Context, r DeviceRays, flags geom.Flags, out DeviceHits) error
	TraceReflectionsInto(ctx context.Context, r DeviceRays, bounces int, out DeviceReflections) error
	VisibleInto(ctx context.Context, r DeviceRays, out *launch.Buffer[uint8]) error
	// IntersectVJPInto is the backward pass of intersect on device
	// buffers; a nil output field is not computed.
	IntersectVJPInto(ctx context.Context, r DeviceRays, tape DeviceTape, g DeviceCotangents, out DeviceGrads) error
	// Memory reports the engine's device allocations (master first); nil
	// off the GPU. ResetPeak resets their high-water marks.
	Memory() []Memory
	ResetPeak()
}

// Multi is the multi-device introspection and calibration of an engine; a
// single-device engine answers with one device and no layer.
type Multi interface {
	// Devices returns the device ordinals, master first (nil on the CPU).
	Devices() []int
	// LastDispatch and LastChunkPlan describe the latest layer call (nil
	// without a layer).
	LastDispatch() *shard.DispatchRecord
	LastChunkPlan() *shard.ChunkPlan
	// Weights returns the split of operation op ([1] without a layer).
	Weights(op string) ([]float64, error)
	// Calibration returns the calibration seam of a replicated engine of
	// at least two replicas; ok false elsewhere.
	Calibration() (c Calibration, ok bool)
}

// Calibration is what Scene.Calibrate needs of a replicated engine.
type Calibration interface {
	// Layer is the engine's layer (weights are stored there).
	Layer() *shard.Layer
	// View returns an engine over the same replicas that dispatches every
	// operation at weights, with a row floor of 1; it lives until the
	// Calibration is closed.
	View(ctx context.Context, weights []float64) (Engine, error)
	// Time runs fn once from a synchronized start and returns its
	// duration: CUDA events on the master when the replicas are CUDA
	// devices, the host clock otherwise.
	Time(fn func() error) (time.Duration, error)
	// BuiltinProbe is the default workload of spec §8.4 over the probe
	// rays (host path through the views when the replicas are not CUDA
	// devices, resident device buffers otherwise).
	BuiltinProbe(o calibrate.Options, r Rays) (calibrate.Probe, error)
	// Close releases the views, the timer and the probe buffers.
	Close() error
}

// Memory is one device's allocations through rayd-go.
type Memory struct {
	Device        int
	Current, Peak int64
}
