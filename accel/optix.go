package accel

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// ModuleOptiX is the PTX module of the OptiX backend (ptx/src/optix_trace.cu).
const ModuleOptiX = "optix_trace"

// optixModuleOptions are the compile options every OptiX pipeline of this
// package shares: 4 payload words (t, u, v, prim), 2 attributes, launch
// parameters in `params`.
var optixModuleOptions = launch.OptiXModuleOptions{PayloadValues: 4, AttributeValues: 2, ParamsName: "params"}

// The OptiX pipelines of the backend (see optix_trace.cu).
var (
	optixIntersectSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__intersect", Miss: "__miss__noop", ClosestHit: "__closesthit__hit"}
	optixIntersectTSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__intersect_t", Miss: "__miss__noop", ClosestHit: "__closesthit__t"}
	optixReflectionsSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__reflections", Miss: "__miss__noop", ClosestHit: "__closesthit__hit"}
	optixVisibleSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__visible", Miss: "__miss__visible", ClosestHit: "__closesthit__visible"}
)

// optixPipelines are the backend's pipelines on one device.
type optixPipelines struct {
	intersect, intersectT, reflections, visible *launch.OptiXPipeline
}

// loadOptiXPipelines returns the device's OptiX context and the backend's
// pipelines, creating them on first use (memoised per device by launch).
func loadOptiXPipelines(d *launch.Device) (*launch.OptiXContext, optixPipelines, error) {
	var p optixPipelines
	ctx, err := d.OptiX()
	if err != nil {
		return nil, p, err
	}
	for _, e := range []struct {
		dst  **launch.OptiXPipeline
		spec launch.OptiXPipelineSpec
	}{{&p.intersect, optixIntersectSpec}, {&p.intersectT, optixIntersectTSpec},
		{&p.reflections, optixReflectionsSpec}, {&p.visible, optixVisibleSpec}} {
		if *e.dst, err = ctx.Pipeline(e.spec); err != nil {
			return nil, p, err
		}
	}
	return ctx, p, nil
}

// OptiX is the OptiX backend of the queries: one triangle GAS over the
// scene-global vertex/face tables (so OptiX's primitive index is the global
// face id) and the pipelines of ptx/src/optix_trace.cu. It answers
// Intersect, TraceReflections and Visible with the same device records as
// BVH. OptiX's triangle test is not geom.Watertight: t and barycentrics
// agree with the reference to within rounding (t ~1e-6 relative), and exact
// ties (rays through shared edges or vertices) may go to either face.
//
// An OptiX belongs to one device; queries on different streams may share
// it; Build, Refit and Close must not overlap anything else.
type OptiX struct {
	dev      *launch.Device
	ctx      *launch.OptiXContext
	pipes    optixPipelines
	gas      *launch.GAS
	geo      Geometry
	ownsGeo  bool
	numTris  int
	numVerts int
	masks    optixMasks // face masks and the masked pipelines (optix_masks.go)
}

// BuildOptiX uploads the global tables of t and builds their GAS on s:
// refittable (ALLOW_UPDATE) when some mesh of t is dynamic, otherwise
// compacted. It creates the device's OptiX context and pipelines on first
// use and returns after the build has completed. Without OptiX (no
// libnvoptix, no ABI-105 support) it fails; callers fall back to BVH.
func BuildOptiX(s *launch.Stream, t *geom.Tables) (*OptiX, error) {
	if t.NumFaces() == 0 {
		return nil, ErrEmpty
	}
	d := s.Device()
	var g Geometry
	var err error
	if g.Vertices, err = upload(s, d, t.Vertices); err == nil {
		if g.Faces, err = upload(s, d, t.Faces); err == nil {
			if g.FaceShape, err = upload(s, d, t.FaceShape); err == nil {
				g.FaceLocal, err = upload(s, d, t.FaceLocal)
			}
		}
	}
	if err != nil {
		closeGeometry(g)
		return nil, fmt.Errorf("accel: upload tables: %w", err)
	}
	dynamic := false
	for _, dyn := range t.Dynamic {
		dynamic = dynamic || dyn
	}
	o, err := BuildOptiXGeometry(s, g, dynamic)
	if err != nil {
		closeGeometry(g)
		return nil, err
	}
	o.ownsGeo = true
	return o, nil
}

// BuildOptiXGeometry builds the GAS of device-resident tables on s. g must
// stay alive and unchanged while the OptiX is used (it is not copied);
// dynamic allows RefitGeometry. It returns after the build has completed.
func BuildOptiXGeometry(s *launch.Stream, g Geometry, dynamic bool) (*OptiX, error) {
	if g.Vertices == nil || g.Faces == nil {
		return nil, fmt.Errorf("accel: Geometry.Vertices and Geometry.Faces are required")
	}
	n := g.Faces.Len() / 3
	switch {
	case n == 0:
		return nil, ErrEmpty
	case n >= MaxTriangles:
		return nil, fmt.Errorf("%w: %d faces (limit %d)", ErrTooLarge, n, MaxTriangles-1)
	case g.FaceShape != nil && g.FaceShape.Len() < n, g.FaceLocal != nil && g.FaceLocal.Len() < n:
		return nil, fmt.Errorf("accel: FaceShape/FaceLocal shorter than %d faces", n)
	}
	d := s.Device()
	ctx, pipes, err := loadOptiXPipelines(d)
	if err != nil {
		return nil, fmt.Errorf("accel: OptiX backend on %v: %w", d, err)
	}
	gas, err := ctx.BuildGAS(s, launch.GASInput{Vertices: g.Vertices, Faces: g.Faces},
		launch.GASOptions{AllowUpdate: dynamic, Compact: !dynamic})
	if err != nil {
		return nil, fmt.Errorf("accel: OptiX GAS: %w", err)
	}
	return &OptiX{dev: d, ctx: ctx, pipes: pipes, gas: gas, geo: g, numTris: n, numVerts: g.Vertices.Len() / 3}, nil
}

func closeGeometry(g Geometry) {
	for _, c := range []interface{ Close() error }{g.Vertices, g.Faces, g.FaceShape, g.FaceLocal} {
		if c != nil {
			_ = c.Close()
		}
	}
}

// NumTris is the number of triangles.
func (o *OptiX) NumTris() int { return o.numTris }

// Device returns the device the structure lives on.
func (o *OptiX) Device() *launch.Device { return o.dev }

// Refittable reports whether Refit is available (a dynamic build).
func (o *OptiX) Refittable() bool { return o.gas != nil && o.gas.Updatable() }

// GASBytes is the device memory of the acceleration structure.
func (o *OptiX) GASBytes() int {
	if o.gas == nil {
		return 0
	}
	return o.gas.Bytes()
}

// Refit uploads the vertices of t (same meshes, same topology as at build)
// and refits the GAS (OptiX update). Returns when queued: the structure may
// be queried on s right after; other streams must wait for s.
func (o *OptiX) Refit(s *launch.Stream, t *geom.Tables) error {
	if !o.ownsGeo {
		return fmt.Errorf("accel: Refit: the OptiX structure was built from device geometry; use RefitGeometry")
	}
	if t.NumFaces() != o.numTris || len(t.Vertices) != o.geo.Vertices.Len() {
		return fmt.Errorf("%w: %d faces, %d vertex floats (built with %d, %d)", ErrTopology,
			t.NumFaces(), len(t.Vertices), o.numTris, o.geo.Vertices.Len())
	}
	if !o.Refittable() {
		return ErrNotRefittable
	}
	if err := o.geo.Vertices.Upload(s, t.Vertices); err != nil {
		return err
	}
	return o.RefitGeometry(s)
}

// RefitGeometry refits after the caller changed the vertices of the device
// geometry the structure was built from (same buffers, same topology).
func (o *OptiX) RefitGeometry(s *launch.Stream) error {
	if !o.Refittable() {
		return ErrNotRefittable
	}
	return o.gas.Refit(s)
}

// Close frees the GAS (and the uploaded tables of BuildOptiX). The device's
// OptiX context and pipelines stay for later structures. Idempotent; no
// queued work may still use the structure.
func (o *OptiX) Close() error {
	var errs []error
	if o.gas != nil {
		errs = append(errs, o.gas.Close())
		o.gas = nil
	}
	errs = append(errs, o.masks.close())
	if o.ownsGeo {
		for _, c := range []interface{ Close() error }{o.geo.Vertices, o.geo.Faces, o.geo.FaceShape, o.geo.FaceLocal} {
			if c != nil {
				errs = append(errs, c.Close())
			}
		}
		o.ownsGeo = false
	}
	return errors.Join(errs...)
}
