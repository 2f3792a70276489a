package rayd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/internal/engine/cpu"
	"github.com/rayd-go/rayd/internal/engine/cuda"
	"github.com/rayd-go/rayd/internal/engine/replicated"
	"github.com/rayd-go/rayd/shard"
)

// Mesh is a triangle mesh: 3 float32 per vertex, 3 local int32 vertex
// indices per face. Dynamic meshes accept UpdateVertices.
type Mesh = geom.Mesh

// Flags selects which Intersection fields are materialized.
type Flags = geom.Flags

// Intersection flags (RayD's RayFlags).
const (
	FlagsNone     = geom.FlagsNone     // t only: 4 bytes per row
	FlagGeometric = geom.FlagGeometric // p, geo_n, barycentric, ids
	FlagShadingN  = geom.FlagShadingN  // n
	FlagUV        = geom.FlagUV        // uv
	FlagsAll      = geom.FlagsAll      // the full 76-byte record
)

// Hits is an intersection record on the host (structure of arrays).
type Hits = geom.Hits

// Reflections is a trace_reflections record on the host.
type Reflections = geom.Reflections

// Rays is a batch of rays on the host: Origins and Directions hold 3 float32
// per row; TMax (one per row) and Active (one per row) are optional.
// Directions are not normalised: t is measured in units of |d|.
//
// TMin and Mask are the optional per-ray limits of the ray-tracing queries
// (Intersect, TraceReflections; see masks.go): TMin starts each row's
// interval (empty: the query's epsilon, 1e-6 for Intersect and 1e-5 for
// TraceReflections' first bounce) and must be finite, ≥ 0 and ≤ the row's
// TMax; Mask is each row's 8-bit visibility mask (empty: 0xFF), and a hit
// counts only when it shares a bit with the mask of the hit mesh.
type Rays struct {
	Origins    []float32
	Directions []float32
	TMax       []float32
	Active     []bool
	TMin       []float32
	Mask       []uint8
}

// Len returns the row count (len(Origins)/3).
func (r Rays) Len() int { return len(r.Origins) / 3 }

func (r Rays) engine() engine.Rays {
	return engine.Rays{Origins: r.Origins, Directions: r.Directions, TMax: r.TMax, Active: r.Active, TMin: r.TMin, Mask: r.Mask}
}

// Scene is a set of meshes ready for ray queries on one backend. It is safe
// for concurrent queries; UpdateVertices waits for running queries.
//
// The Scene is a façade: every method validates its inputs once, takes the
// scene's lock and calls one method of the engine that runs the scene (the
// CPU references, one CUDA device, or a replicated layer over several), see
// ARCHITECTURE.md.
type Scene struct {
	mu      sync.RWMutex
	tables  *geom.Tables
	backend Backend
	device  int
	eng     engine.Engine
	closed  bool
	log     *slog.Logger

	calMu   sync.Mutex
	lastCal *calibrate.Record

	edgeOnce sync.Once   // builds the edge table on the first edge call
	edges    *edge.Scene // the edge table over tables, and the edge mask
	edgeGen  uint64      // counts edge mask changes (device copies follow it)

	inst *geom.Instances // WithInstances: the instance table; nil on a mesh-only scene
}

// NewScene validates meshes, concatenates them (mesh i gets shape id i) and
// builds the acceleration structure on the selected backend.
func NewScene(ctx context.Context, meshes []Mesh, opts ...Option) (*Scene, error) {
	cfg := config{backend: BackendAuto, logger: slog.Default()}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := geom.BuildTables(meshes)
	if err != nil {
		return nil, err
	}
	s := &Scene{tables: t, device: -1, log: cfg.logger}
	if s.eng, err = newReplicated(ctx, &cfg, t); err != nil {
		return nil, err
	}
	if s.eng != nil {
		s.backend, s.device = BackendCUDA, cfg.devices[0]
		if err := s.setupInstances(ctx, cfg.instances); err != nil {
			_ = s.eng.Close()
			return nil, err
		}
		return s, nil
	}
	if len(cfg.devices) == 1 {
		cfg.device = cfg.devices[0]
	}
	s.eng, s.backend, err = newSingle(ctx, &cfg, t)
	if err != nil {
		return nil, err
	}
	if s.backend != BackendCPU {
		s.device = cfg.device
	}
	if err := s.setupInstances(ctx, cfg.instances); err != nil {
		_ = s.eng.Close()
		return nil, err
	}
	return s, nil
}

// newSingle builds the engine of a single-device (or CPU) scene.
func newSingle(ctx context.Context, cfg *config, t *geom.Tables) (engine.Engine, Backend, error) {
	switch cfg.backend {
	case BackendCPU:
		e, err := cpu.New(ctx, t)
		return e, BackendCPU, err
	case BackendCUDA, BackendOptiX:
		kind := cuda.BVH
		if cfg.backend == BackendOptiX {
			kind = cuda.OptiX
		}
		e, err := cuda.New(ctx, t, cfg.device, kind)
		if err != nil {
			return nil, cfg.backend, err
		}
		return e, cfg.backend, nil
	}
	b := AutoBackend(cfg.device)
	if b == BackendOptiX && cfg.instances != nil {
		b = BackendCUDA // the CUDA BVH's instance layer is the reference's bit for bit; OptiX's is asked for explicitly
	}
	kind := cuda.BVH
	if b == BackendOptiX {
		kind = cuda.OptiX
	}
	e, err := cuda.New(ctx, t, cfg.device, kind)
	if err != nil && b == BackendOptiX && !errors.Is(err, ErrBackendUnavailable) {
		cfg.logger.Debug("rayd: OptiX unavailable, using the CUDA BVH", "reason", err)
		b = BackendCUDA
		e, err = cuda.New(ctx, t, cfg.device, cuda.BVH)
	}
	if err == nil {
		return e, b, nil
	}
	if !errors.Is(err, ErrBackendUnavailable) {
		return nil, b, err
	}
	warnFallback(cfg.logger, err)
	c, err := cpu.New(ctx, t)
	return c, BackendCPU, err
}

// newReplicated builds the engine of a replicated scene, or returns nil for
// the plain single-device path.
func newReplicated(ctx context.Context, cfg *config, t *geom.Tables) (engine.Engine, error) {
	if cfg.devices == nil && cfg.multi == nil {
		return nil, nil
	}
	rc := replicated.Config{Devices: cfg.devices, Tables: t}
	if cfg.multi != nil {
		rc.Options = *cfg.multi
	}
	// The request is checked before any device is probed, so a machine
	// without a GPU refuses bad options with the same error as one with.
	if err := shard.ValidateOptions(cfg.devices, rc.Options); err != nil {
		return nil, err
	}
	if cfg.source != nil {
		rc.Source = cfg.source
	}
	e, err := replicated.New(ctx, rc)
	if err == nil && e == nil {
		return nil, nil // one device, no chunking knob: the plain path
	}
	if err != nil {
		return nil, multiError(err)
	}
	return e, nil
}

// Backend reports the backend that runs this scene's queries.
func (s *Scene) Backend() Backend { return s.backend }

// Device returns the CUDA device ordinal (the master's on a replicated
// scene), or -1 on the CPU backend.
func (s *Scene) Device() int { return s.device }

// NumMeshes returns the number of meshes.
func (s *Scene) NumMeshes() int { return s.tables.NumMeshes() }

// NumFaces returns the number of triangles over all meshes.
func (s *Scene) NumFaces() int { return s.tables.NumFaces() }

// NumVertices returns the number of scene-global vertices (over all meshes).
func (s *Scene) NumVertices() int { return s.tables.NumVertices() }

// FaceOffsets returns, per mesh, the global id of its first face (RayD's
// face_offsets): face f of mesh m is global face FaceOffsets()[m] + f. The
// slice is a copy.
func (s *Scene) FaceOffsets() []int32 { return append([]int32(nil), s.tables.FaceOffset...) }

// VertexOffsets returns, per mesh, the global id of its first vertex. The
// slice is a copy.
func (s *Scene) VertexOffsets() []int32 { return append([]int32(nil), s.tables.VertexOffset...) }

// rlock read-locks the scene for a query, refusing a closed scene and a
// cancelled context.
func (s *Scene) rlock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Intersect returns the closest hit of every ray (tmin per row or 1e-6; tmax
// per row or unbounded; only meshes whose mask shares a bit with the row's
// mask). flags selects the fields: FlagsAll for the full record, FlagsNone
// for t alone.
func (s *Scene) Intersect(ctx context.Context, r Rays, flags Flags) (*Hits, error) {
	if flags&^FlagsAll != 0 {
		return nil, fmt.Errorf("%w: flags %#x", ErrInvalidArgument, uint32(flags))
	}
	if err := checkTracedRays(r); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.Intersect(ctx, r.engine(), flags)
}

// TraceReflections follows each ray through up to maxBounces specular
// reflections and records, per bounce, the hit t, the global prim id and
// the image source; TMax and TMin bound the first bounce only (later bounces
// start at the contract's 1e-5), and Mask applies to every bounce.
// maxBounces is in [1, MaxBounces]; a record that cannot fit in memory is an
// *AllocationError (ErrTooLarge), refused before anything is allocated.
func (s *Scene) TraceReflections(ctx context.Context, r Rays, maxBounces int) (*Reflections, error) {
	if err := geom.CheckBounces(maxBounces); err != nil {
		return nil, err
	}
	if err := checkTracedRays(r); err != nil {
		return nil, err
	}
	if err := geom.CheckReflections(r.Len(), maxBounces, true, geom.HostMemoryLimit()); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.TraceReflections(ctx, r.engine(), maxBounces)
}

// Visible reports, per row, whether the segment start→end is unobstructed
// (segments shorter than 2e-5 are visible; endpoints are shrunk by 1e-5;
// meshes whose mask is 0 never block).
// A row with a non-finite coordinate is a miss of the segment query and so
// visible (operations spec §0.2, §4.1); the variants (VisiblePair, …) treat
// such a row as inactive instead.
func (s *Scene) Visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	if _, err := geom.CheckSegments(start, end, active); err != nil {
		return nil, err
	}
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.Visible(ctx, start, end, active)
}

// UpdateVertices replaces the vertices of dynamic mesh `mesh` (same vertex
// count, finite values) and refits the acceleration structure. It waits for
// running queries and blocks new ones while it runs. On a replicated scene
// a failure on any replica leaves the scene's geometry unchanged and the
// replicas refusing work (ErrPoisoned) until Rebuild.
func (s *Scene) UpdateVertices(ctx context.Context, mesh int, vertices []float32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if mesh < 0 || mesh >= s.tables.NumMeshes() {
		return &geom.ArgumentError{Field: "mesh", Reason: fmt.Sprintf("%d of %d meshes", mesh, s.tables.NumMeshes())}
	}
	off, nv := 3*int(s.tables.VertexOffset[mesh]), 3*s.tables.MeshVertexCount(mesh)
	old := append([]float32(nil), s.tables.Vertices[off:off+nv]...)
	if err := s.tables.UpdateVertices(mesh, vertices); err != nil {
		return err
	}
	if err := s.eng.Refit(ctx, mesh, vertices); err != nil {
		// The caller-visible geometry changes only when the refit succeeded.
		_ = s.tables.UpdateVertices(mesh, old)
		return err
	}
	return nil
}

// Rebuild rebuilds the scene's acceleration structures from its current
// geometry. It is the recovery of a replicated scene whose replicas may
// disagree after a failed UpdateVertices or SetEdgeMask (every query then
// fails with ErrPoisoned until Rebuild succeeds); on other scenes it simply
// rebuilds. It waits for running queries.
func (s *Scene) Rebuild(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.eng.Rebuild(ctx)
}

// Close releases the scene's device resources. Idempotent.
func (s *Scene) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.eng.Close()
}
