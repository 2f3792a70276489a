package accel

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// ModuleOptiXInstance is the PTX module of the OptiX instance layer
// (ptx/src/optix_instance.cu).
const ModuleOptiXInstance = "optix_instance"

// optixInstanceOptions are the compile options of the instance layer's
// module: 5 payload words (t, u, v, GAS-local face, instance id), 2
// attributes, launch parameters in `params`, single-level instancing. The
// mesh pipelines (optixModuleOptions) are not affected.
var optixInstanceOptions = launch.OptiXModuleOptions{PayloadValues: 5, AttributeValues: 2, ParamsName: "params",
	Instancing: true}

// The instance layer's pipelines (see optix_instance.cu): plain, with the
// per-row limits (tmin, ray mask), and with the mesh-mask any-hit filter.
var (
	optixInstIntersectSpec = launch.OptiXPipelineSpec{Module: ModuleOptiXInstance, Options: optixInstanceOptions,
		Raygen: "__raygen__intersect_instanced", Miss: "__miss__noop", ClosestHit: "__closesthit__instanced"}
	optixInstLimitsSpec = launch.OptiXPipelineSpec{Module: ModuleOptiXInstance, Options: optixInstanceOptions,
		Raygen: "__raygen__intersect_instanced_limits", Miss: "__miss__noop", ClosestHit: "__closesthit__instanced"}
	optixInstMaskedSpec = launch.OptiXPipelineSpec{Module: ModuleOptiXInstance, Options: optixInstanceOptions,
		Raygen: "__raygen__intersect_instanced_masked", Miss: "__miss__noop", ClosestHit: "__closesthit__instanced",
		AnyHit: "__anyhit__mesh_mask"}
)

// Indices of optixInstSpecs / OptiXInstanceLayer.pipes.
const (
	instPlain = iota
	instLimits
	instMasked
)

var optixInstSpecs = [3]launch.OptiXPipelineSpec{optixInstIntersectSpec, optixInstLimitsSpec, optixInstMaskedSpec}

// OptiXInstanceLayer is the OptiX side of a scene with instances: one
// triangle GAS per geometry (mesh) over that mesh's object-space vertices,
// built once, and an IAS over one OptixInstance per instance (its 3×4
// transform, instanceId = its index, visibilityMask = its mask, the GAS of
// its geometry), rebuilt whenever transforms or masks change. Intersect
// answers like InstanceLayer.Intersect with OptiX's triangle test: t and
// barycentrics agree with ref.InstancedScene to within rounding, exact ties
// may go to another face or instance, and every other field is derived
// from them by the reference's operation sequences.
//
// A layer belongs to one device; queries on different streams may share
// it; Update and Close must not overlap anything else.
type OptiXInstanceLayer struct {
	dev      *launch.Device
	ctx      *launch.OptiXContext
	verts    []*launch.Buffer[float32] // per geometry: object-space vertices
	faces    []*launch.Buffer[int32]   // per geometry: faces (indices into verts)
	gas      []*launch.GAS
	geoPtrs  *launch.Buffer[uint64] // vertices, faces address per geometry
	geoFirst *launch.Buffer[int32]  // first global face per geometry
	inst     *launch.Buffer[float32]
	ias      *launch.IAS
	numInst  int

	mu    sync.Mutex
	pipes [3]*launch.OptiXPipeline // created on first use
}

// NewOptiXInstanceLayer uploads every mesh of t, builds its GAS and the IAS
// over x on s, and returns once the builds have completed. Without OptiX it
// fails (callers may use NewInstanceLayer on the CUDA BVH instead).
func NewOptiXInstanceLayer(s *launch.Stream, t *geom.Tables, x *geom.Instances) (l *OptiXInstanceLayer, err error) {
	if t.NumFaces() == 0 || x.Len() == 0 {
		return nil, ErrEmpty
	}
	d := s.Device()
	l = &OptiXInstanceLayer{dev: d}
	defer func() {
		if err != nil {
			_ = s.Synchronize()
			_ = l.Close()
			l = nil
		}
	}()
	if l.ctx, err = d.OptiX(); err != nil {
		return nil, fmt.Errorf("accel: OptiX instance layer on %v: %w", d, err)
	}
	if _, err = l.pipeline(instPlain); err != nil {
		return nil, err
	}
	ptrs := make([]uint64, 0, 2*t.NumMeshes())
	for m, mesh := range t.Meshes() {
		sub, err := geom.BuildTables([]geom.Mesh{mesh})
		if err != nil {
			return nil, err
		}
		v, err := upload(s, d, sub.Vertices)
		if err != nil {
			return nil, err
		}
		l.verts = append(l.verts, v)
		f, err := upload(s, d, sub.Faces)
		if err != nil {
			return nil, err
		}
		l.faces = append(l.faces, f)
		g, err := l.ctx.BuildGAS(s, launch.GASInput{Vertices: v, Faces: f}, launch.GASOptions{Compact: true})
		if err != nil {
			return nil, fmt.Errorf("accel: OptiX GAS of geometry %d: %w", m, err)
		}
		l.gas = append(l.gas, g)
		ptrs = append(ptrs, v.Addr(), f.Addr())
	}
	if l.geoPtrs, err = upload(s, d, ptrs); err != nil {
		return nil, err
	}
	if l.geoFirst, err = upload(s, d, t.FaceOffset[:t.NumMeshes()]); err != nil {
		return nil, err
	}
	rec := InstanceRecords(x)
	if l.inst, err = upload(s, d, rec); err != nil {
		return nil, err
	}
	if l.ias, err = l.ctx.BuildIAS(s, OptiXInstances(x, l.gas)); err != nil {
		return nil, fmt.Errorf("accel: OptiX IAS: %w", err)
	}
	l.numInst = x.Len()
	return l, s.Synchronize()
}

// OptiXInstances are the IAS instances of x: instance i places the GAS
// gas[geometry] with its transform, instance id i and its mask.
func OptiXInstances(x *geom.Instances, gas []*launch.GAS) []launch.IASInstance {
	out := make([]launch.IASInstance, x.Len())
	for i, r := range x.Records {
		out[i] = launch.IASInstance{GAS: gas[r.Geometry], Transform: r.Transform, ID: uint32(i), Mask: r.Mask}
	}
	return out
}

// Update uploads x's current transforms and masks (same instance count and
// geometries as at build) and rebuilds the IAS on s; the GASes are
// untouched. Returns when queued.
func (l *OptiXInstanceLayer) Update(s *launch.Stream, x *geom.Instances) error {
	if l.ias == nil {
		return ErrClosedAccel
	}
	if x.Len() != l.numInst {
		return fmt.Errorf("accel: %d instances, the layer was built for %d", x.Len(), l.numInst)
	}
	for i, r := range x.Records {
		if r.Geometry < 0 || int(r.Geometry) >= len(l.gas) {
			return fmt.Errorf("accel: instance %d names geometry %d of %d", i, r.Geometry, len(l.gas))
		}
	}
	if err := l.inst.Upload(s, InstanceRecords(x)); err != nil {
		return err
	}
	return l.ias.Rebuild(s, OptiXInstances(x, l.gas))
}

// NumInstances is the number of instances.
func (l *OptiXInstanceLayer) NumInstances() int { return l.numInst }

// NumGeometries is the number of geometries (one GAS each).
func (l *OptiXInstanceLayer) NumGeometries() int { return len(l.gas) }

// Bytes is the device memory of the acceleration structures (the GASes
// and the IAS).
func (l *OptiXInstanceLayer) Bytes() int {
	n := 0
	for _, g := range l.gas {
		n += g.Bytes()
	}
	if l.ias != nil {
		n += l.ias.Bytes()
	}
	return n
}

// pipeline returns pipeline k (instPlain, instLimits, instMasked), created
// on first use (memoised per device by launch, and here per layer).
func (l *OptiXInstanceLayer) pipeline(k int) (*launch.OptiXPipeline, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pipes[k] != nil {
		return l.pipes[k], nil
	}
	p, err := l.ctx.Pipeline(optixInstSpecs[k])
	if err != nil {
		return nil, fmt.Errorf("accel: OptiX instance pipeline on cuda:%d: %w", l.ctx.Ordinal(), err)
	}
	l.pipes[k] = p
	return p, nil
}

// Close releases the IAS, the GASes and every uploaded table. Idempotent;
// no queued work may still use the layer.
func (l *OptiXInstanceLayer) Close() error {
	var errs []error
	if l.ias != nil {
		errs = append(errs, l.ias.Close())
		l.ias = nil
	}
	for _, g := range l.gas {
		errs = append(errs, g.Close())
	}
	for _, b := range l.verts {
		errs = append(errs, b.Close())
	}
	for _, b := range l.faces {
		errs = append(errs, b.Close())
	}
	errs = append(errs, l.geoPtrs.Close(), l.geoFirst.Close(), l.inst.Close())
	l.gas, l.verts, l.faces, l.geoPtrs, l.geoFirst, l.inst = nil, nil, nil, nil, nil, nil
	return errors.Join(errs...)
}
