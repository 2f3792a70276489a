package rayd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
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
type Rays struct {
	Origins    []float32
	Directions []float32
	TMax       []float32
	Active     []bool
}

// Len returns the row count (len(Origins)/3).
func (r Rays) Len() int { return len(r.Origins) / 3 }

// engine is one backend's implementation of the queries.
type engine interface {
	intersect(ctx context.Context, r Rays, flags Flags) (*Hits, error)
	traceReflections(ctx context.Context, r Rays, maxBounces int) (*Reflections, error)
	visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error)
	refit(ctx context.Context, mesh int, vertices []float32, t *geom.Tables) error
	close() error
}

// Scene is a set of meshes ready for ray queries on one backend. It is safe
// for concurrent queries; UpdateVertices waits for running queries.
type Scene struct {
	mu      sync.RWMutex
	tables  *geom.Tables
	backend Backend
	device  int
	eng     engine
	layer   *shard.Layer // replicated multi-device layer, or nil
	closed  bool
	log     *slog.Logger

	calMu   sync.Mutex
	lastCal *calibrate.Record

	edgeOnce sync.Once    // builds edges on the first edge call
	edges    *edge.Scene  // the edge table over tables, and the edge mask
	edgeGen  uint64       // counts edge mask changes (device copies follow it)
	hostRef  hostBlockers // visibility variants of engines without their own
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
	layer, src, err := newLayer(ctx, &cfg, meshes)
	if err != nil {
		return nil, err
	}
	if layer != nil {
		le := &layerEngine{l: layer, dev: masterDevice(src, layer.Master()), topo: src.Topology(),
			streams: make(chan *masterSlot, streamSlots)}
		if c, ok := src.(io.Closer); ok && src != cfg.source {
			le.src = c
		}
		s.layer, s.eng, s.backend, s.device = layer, le, BackendCUDA, layer.Master()
		return s, nil
	}
	if len(cfg.devices) == 1 {
		cfg.device = cfg.devices[0]
	}
	switch cfg.backend {
	case BackendCPU:
		s.eng, err = newCPUEngine(t)
		s.backend = BackendCPU
	case BackendCUDA:
		s.eng, err = newCUDAEngine(ctx, t, cfg.device, buildBVH)
		s.backend, s.device = BackendCUDA, cfg.device
	case BackendOptiX:
		s.eng, err = newCUDAEngine(ctx, t, cfg.device, buildOptiX)
		s.backend, s.device = BackendOptiX, cfg.device
	case BackendAuto:
		b := AutoBackend(cfg.device)
		build := buildBVH
		if b == BackendOptiX {
			build = buildOptiX
		}
		s.eng, err = newCUDAEngine(ctx, t, cfg.device, build)
		s.backend, s.device = b, cfg.device
		if err != nil && b == BackendOptiX && !errors.Is(err, ErrBackendUnavailable) {
			cfg.logger.Debug("rayd: OptiX unavailable, using the CUDA BVH", "reason", err)
			s.eng, err = newCUDAEngine(ctx, t, cfg.device, buildBVH)
			s.backend = BackendCUDA
		}
		if err != nil && errors.Is(err, ErrBackendUnavailable) {
			cfg.logger.Warn("rayd: no usable CUDA device; falling back to the CPU reference backend (slow)", "reason", err)
			s.eng, err = newCPUEngine(t)
			s.backend, s.device = BackendCPU, -1
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Backend reports the backend that runs this scene's queries.
func (s *Scene) Backend() Backend { return s.backend }

// Device returns the CUDA device ordinal, or -1 on the CPU backend.
func (s *Scene) Device() int { return s.device }

// NumMeshes returns the number of meshes.
func (s *Scene) NumMeshes() int { return s.tables.NumMeshes() }

// NumFaces returns the number of triangles over all meshes.
func (s *Scene) NumFaces() int { return s.tables.NumFaces() }

func (s *Scene) rlock() error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Intersect returns the closest hit of every ray (tmin 1e-6; tmax per row or
// unbounded). flags selects the fields: FlagsAll for the full record,
// FlagsNone for t alone.
func (s *Scene) Intersect(ctx context.Context, r Rays, flags Flags) (*Hits, error) {
	if flags&^FlagsAll != 0 {
		return nil, fmt.Errorf("%w: flags %#x", ErrInvalidArgument, uint32(flags))
	}
	if _, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.intersect(ctx, r, flags)
}

// TraceReflections follows each ray through up to maxBounces specular
// reflections (maxBounces ≥ 1) and records, per bounce, the hit t, the global
// prim id and the image source; TMax bounds the first bounce only.
func (s *Scene) TraceReflections(ctx context.Context, r Rays, maxBounces int) (*Reflections, error) {
	if maxBounces < 1 {
		return nil, &geom.ArgumentError{Field: "maxBounces", Reason: fmt.Sprintf("%d, must be at least 1", maxBounces)}
	}
	if _, err := geom.CheckRays(r.Origins, r.Directions, r.TMax, r.Active); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.traceReflections(ctx, r, maxBounces)
}

// Visible reports, per row, whether the segment start→end is unobstructed
// (segments shorter than 2e-5 are visible; endpoints are shrunk by 1e-5).
func (s *Scene) Visible(ctx context.Context, start, end []float32, active []bool) ([]bool, error) {
	if _, err := geom.CheckSegments(start, end, active); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.eng.visible(ctx, start, end, active)
}

// UpdateVertices replaces the vertices of dynamic mesh `mesh` (same vertex
// count, finite values) and refits the acceleration structure. It waits for
// running queries and blocks new ones while it runs.
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
	if err := s.eng.refit(ctx, mesh, vertices, s.tables); err != nil {
		// The caller-visible geometry changes only when the refit succeeded.
		_ = s.tables.UpdateVertices(mesh, old)
		return err
	}
	s.hostRef.mu.Lock()
	s.hostRef.stale = true
	s.hostRef.mu.Unlock()
	return nil
}

// Close releases the scene's device resources. Idempotent.
func (s *Scene) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.eng.close()
}
