package accel

import (
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/launch"
)

// The masked OptiX pipelines (ptx/src/optix_trace.cu): the raygen programs
// that read the per-row tmin, each with the unmasked pipeline's miss and
// closest-hit programs and the any-hit filter __anyhit__mask.
var (
	optixIntersectMaskedSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__intersect_masked", Miss: "__miss__noop", ClosestHit: "__closesthit__hit", AnyHit: "__anyhit__mask"}
	optixIntersectTMaskedSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__intersect_t_masked", Miss: "__miss__noop", ClosestHit: "__closesthit__t", AnyHit: "__anyhit__mask"}
	optixReflectionsMaskedSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__reflections_masked", Miss: "__miss__noop", ClosestHit: "__closesthit__hit", AnyHit: "__anyhit__mask"}
	optixVisibleMaskedSpec = launch.OptiXPipelineSpec{Module: ModuleOptiX, Options: optixModuleOptions,
		Raygen: "__raygen__visible_masked", Miss: "__miss__visible", ClosestHit: "__closesthit__visible", AnyHit: "__anyhit__mask"}
)

// optixMasks is the mask state of an OptiX structure: the face mask table
// (nil while every face has the default mask) and the masked pipelines,
// created on the first masked query.
type optixMasks struct {
	faceMask *launch.Buffer[uint8]

	mu     sync.Mutex
	loaded bool
	pipes  optixPipelines
}

// SetFaceMasks sets the visibility mask of every global face (in global
// face order, geom.Tables.FaceMasks) on s, like BVH.SetFaceMasks: while any
// mask differs from geom.DefaultMask the queries run the masked pipelines,
// whose any-hit program discards a candidate face whose mask shares no bit
// with the row's mask (Rays.Mask; 0xFF for rays without one and for
// segments); when every mask is the default the table is freed and the
// unmasked pipelines run again. Queries on other streams must be ordered
// after s.
func (o *OptiX) SetFaceMasks(s *launch.Stream, masks []uint8) error {
	if len(masks) != o.numTris {
		return fmt.Errorf("accel: %d face masks for %d faces", len(masks), o.numTris)
	}
	if allDefault(masks) {
		err := o.masks.faceMask.CloseOn(s)
		o.masks.faceMask = nil
		return err
	}
	if o.masks.faceMask == nil {
		buf, err := launch.AllocAsync[uint8](s, len(masks))
		if err != nil {
			return err
		}
		o.masks.faceMask = buf
	}
	return o.masks.faceMask.Upload(s, masks)
}

// Masked reports whether any face has a non-default mask.
func (o *OptiX) Masked() bool { return o.masks.faceMask != nil }

// pipelinesFor returns the pipelines of a query of r: the masked ones, with
// r's limits and the face masks written into p, when r carries limits or a
// face has a non-default mask; the unmasked ones otherwise.
func (o *OptiX) pipelinesFor(p *optixParams, r Rays) (optixPipelines, error) {
	if r.TMin == nil && r.Mask == nil && o.masks.faceMask == nil {
		return o.pipes, nil
	}
	pipes, err := o.maskedPipelines()
	if err != nil {
		return pipes, err
	}
	putBuf(p, opTMin, "Rays.TMin", r.TMin)
	putBuf(p, opRayMask, "Rays.Mask", r.Mask)
	putBuf(p, opFaceMask, "face masks", o.masks.faceMask)
	return pipes, nil
}

// maskedPipelines creates the masked pipelines on first use (memoised per
// device by launch, and here per structure).
func (o *OptiX) maskedPipelines() (optixPipelines, error) {
	m := &o.masks
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.loaded {
		return m.pipes, nil
	}
	var p optixPipelines
	for _, e := range []struct {
		dst  **launch.OptiXPipeline
		spec launch.OptiXPipelineSpec
	}{{&p.intersect, optixIntersectMaskedSpec}, {&p.intersectT, optixIntersectTMaskedSpec},
		{&p.reflections, optixReflectionsMaskedSpec}, {&p.visible, optixVisibleMaskedSpec}} {
		var err error
		if *e.dst, err = o.ctx.Pipeline(e.spec); err != nil {
			return p, fmt.Errorf("accel: masked OptiX pipeline on cuda:%d: %w", o.ctx.Ordinal(), err)
		}
	}
	m.pipes, m.loaded = p, true
	return p, nil
}

// close frees the face mask table.
func (m *optixMasks) close() error {
	if m.faceMask == nil {
		return nil
	}
	err := m.faceMask.Close()
	m.faceMask = nil
	return err
}
