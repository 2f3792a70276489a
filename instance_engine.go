package rayd

import (
	"context"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// instancedEngine runs a scene with instances on its engine: Intersect
// goes to the engine's instance layer, mutations rebuild it, and every
// query that has no instanced form yet is refused with an
// *UnsupportedError naming it, never answered over the bare meshes.
type instancedEngine struct {
	engine.Engine
	inst *geom.Instances
}

// refuse is the refusal of op on an instanced scene.
func (e *instancedEngine) refuse(op string) error {
	return engine.Unsupported(e.Describe(), op, "not yet available on a scene with instances (Intersect is)")
}

func (e *instancedEngine) Intersect(ctx context.Context, r engine.Rays, flags geom.Flags) (*geom.Hits, error) {
	return e.IntersectInstanced(ctx, r, flags)
}

func (e *instancedEngine) Refit(ctx context.Context, mesh int, vertices []float32) error {
	if err := e.Engine.Refit(ctx, mesh, vertices); err != nil {
		return err
	}
	return e.SetInstances(ctx, e.inst)
}

func (e *instancedEngine) Rebuild(ctx context.Context) error {
	if err := e.Engine.Rebuild(ctx); err != nil {
		return err
	}
	return e.SetInstances(ctx, e.inst)
}

func (e *instancedEngine) TraceReflections(context.Context, engine.Rays, int) (*geom.Reflections, error) {
	return nil, e.refuse("TraceReflections")
}

func (e *instancedEngine) Visible(context.Context, []float32, []float32, []bool) ([]bool, error) {
	return nil, e.refuse("Visible")
}

func (e *instancedEngine) VisiblePair(context.Context, *geom.SegmentBatch) (*geom.PairVisibility, error) {
	return nil, e.refuse("VisiblePair")
}

func (e *instancedEngine) VisibleEdge(context.Context, *geom.SegmentBatch) ([]bool, error) {
	return nil, e.refuse("VisibleEdge")
}

func (e *instancedEngine) VisibleChain(context.Context, *geom.SegmentBatch) (*geom.ChainVisibility, error) {
	return nil, e.refuse("VisibleChain")
}

func (e *instancedEngine) NearestEdge(context.Context, engine.Edges, []float32, []bool) (*edge.PointResult, error) {
	return nil, e.refuse("NearestEdge")
}

func (e *instancedEngine) NearestEdgeRay(context.Context, engine.Edges, engine.Rays) (*edge.RayResult, error) {
	return nil, e.refuse("NearestEdgeRay")
}

func (e *instancedEngine) NearestEdges(context.Context, engine.Edges, []float32, int, []bool) (*edge.TopK, error) {
	return nil, e.refuse("NearestEdges")
}

func (e *instancedEngine) NearestEdgeVJP(context.Context, engine.Edges, []float32, []int32, edge.PointCotangent) (*shard.EdgePointGrads, error) {
	return nil, e.refuse("NearestEdgeVJP")
}

func (e *instancedEngine) NearestEdgeRayVJP(context.Context, engine.Edges, engine.Rays, []int32, edge.RayCotangent) (*shard.EdgeRayGrads, error) {
	return nil, e.refuse("NearestEdgeRayVJP")
}

func (e *instancedEngine) IntersectVJP(context.Context, engine.Rays, []int32, []float32, geom.IntersectCotangents) (*shard.IntersectGrads, error) {
	return nil, e.refuse("IntersectVJP")
}

func (e *instancedEngine) AccumDfrDirect(context.Context, *rf.DfrStates, rf.DfrGrid, *rf.DfrMaterial, []bool, rf.AccumOptions) (*rf.AccumResult, error) {
	return nil, e.refuse("AccumDfrDirect")
}

func (e *instancedEngine) AccumDfrCoherentDirect(context.Context, *rf.DfrStates, rf.DfrGrid, *rf.DfrMaterial, []bool, rf.CoherentOptions) (*rf.CoherentResult, error) {
	return nil, e.refuse("AccumDfrCoherentDirect")
}

func (e *instancedEngine) AccumulateReflections(context.Context, rf.ReflRays, rf.AccumGrid, *rf.ReflMaterial, int, rf.ReflOptions) (*rf.ReflResult, error) {
	return nil, e.refuse("AccumulateReflections")
}

func (e *instancedEngine) TraceDfrPaths(context.Context, []float32, []float32, *rf.DfrStates, *rf.DfrMaterial, []bool, rf.PathOptions) (*rf.DfrPaths, error) {
	return nil, e.refuse("TraceDfrPaths")
}

func (e *instancedEngine) IntersectInto(context.Context, engine.DeviceRays, geom.Flags, engine.DeviceHits) error {
	return e.refuse("IntersectInto")
}

func (e *instancedEngine) TraceReflectionsInto(context.Context, engine.DeviceRays, int, engine.DeviceReflections) error {
	return e.refuse("TraceReflectionsInto")
}

func (e *instancedEngine) VisibleInto(context.Context, engine.DeviceRays, *launch.Buffer[uint8]) error {
	return e.refuse("VisibleInto")
}

func (e *instancedEngine) IntersectVJPInto(context.Context, engine.DeviceRays, engine.DeviceTape, engine.DeviceCotangents, engine.DeviceGrads) error {
	return e.refuse("IntersectVJPInto")
}
