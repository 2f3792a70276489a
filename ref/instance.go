package ref

import (
	"context"
	"sync"

	"github.com/rayd-go/rayd/geom"
)

// InstancedScene is the CPU reference of a scene with instances: one
// reference scene per geometry (mesh) in its object space, and the
// instance table. The world is the union of the instances only; a mesh
// that no instance names is never hit.
//
// The closest hit of a ray is a two-level walk: for each instance the ray
// is mapped to object space by geom.ObjectRay (float32, fixed operation
// order) and the geometry's BVH is walked with the watertight test over
// [tmin, best t]. Because the direction is not renormalised, the object t
// is the world t. A row of visibility mask m sees instance i of geometry g
// only when m shares a bit with the instance's mask (InstanceRecord.Mask)
// and with the mesh mask of g (geom.Tables.MaskOf, read at every query):
// both are tested before the object-space ray is formed, and an instance
// that fails either is skipped as if absent. The winner is the smallest t, then the lowest instance
// id, then the lowest face id: the answer does not depend on the order in
// which instances or nodes are visited, so any traversal that culls
// conservatively (a GPU top-level BVH over world boxes) returns it bit for
// bit. The reference's top level visits every instance in id order; each
// geometry BVH culls the object-space ray against its padded boxes, which
// is exact (the same test the walk itself runs).
type InstancedScene struct {
	mu     sync.RWMutex
	tables *geom.Tables
	inst   *geom.Instances
	geos   []*Scene // per mesh, in its object space
	brute  bool
}

// NewInstancedScene builds the reference over the scene's tables and
// instance table (which it reads at every query: SetTransforms on inst, a
// new instance mask or a geom.Tables.SetMask between queries is seen by the
// next one). With BruteForce every instance
// tests every triangle of its geometry.
func NewInstancedScene(ctx context.Context, t *geom.Tables, inst *geom.Instances, opts ...Option) (*InstancedScene, error) {
	if t == nil || t.NumFaces() == 0 {
		return nil, geom.ErrNoMeshes
	}
	if inst == nil || inst.Len() == 0 {
		return nil, geom.ErrNoInstances
	}
	s := &InstancedScene{tables: t, inst: inst, geos: make([]*Scene, t.NumMeshes())}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s.brute = o.bruteForce
	if err := s.loadGeometries(ctx, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// loadGeometries builds one reference scene per mesh from the tables'
// current vertices.
func (s *InstancedScene) loadGeometries(ctx context.Context, opts []Option) error {
	for m, mesh := range s.tables.Meshes() {
		// The mesh mask is tested per instance against the tables' current
		// value; the geometry itself filters nothing.
		mesh.Mask = nil
		sub, err := geom.BuildTables([]geom.Mesh{mesh})
		if err != nil {
			return err
		}
		if s.geos[m], err = NewSceneContext(ctx, sub, opts...); err != nil {
			return err
		}
	}
	return nil
}

// Refit reloads the vertices of every geometry from the tables (after
// geom.Tables.UpdateVertices) and rebuilds their BVHs.
func (s *InstancedScene) Refit(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var opts []Option
	if s.brute {
		opts = append(opts, BruteForce())
	}
	return s.loadGeometries(ctx, opts)
}

// Instances returns the instance table the scene reads.
func (s *InstancedScene) Instances() *geom.Instances { return s.inst }

// InstanceHit is the closest hit of a ray in an instanced scene: T, the
// barycentric weights U and V, the global face Prim of the geometry and
// the Instance.
type InstanceHit struct {
	T, U, V  float32
	Prim     int32
	Instance int32
}

// Closest returns the closest hit of the world ray o + t·d with
// t ∈ [tmin, tmax] (inclusive) over every instance.
func (s *InstancedScene) Closest(o, d [3]float32, tmin, tmax float32) (InstanceHit, bool) {
	return s.ClosestMasked(o, d, tmin, tmax, geom.DefaultMask)
}

// ClosestMasked is Closest for a ray of visibility mask mask: an instance
// counts only when mask shares a bit with its mask and with its geometry's
// mesh mask.
func (s *InstancedScene) ClosestMasked(o, d [3]float32, tmin, tmax float32, mask uint8) (InstanceHit, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closest(o, d, tmin, tmax, mask)
}

// visibleTo reports whether instance record rec counts for a ray of mask
// mask: it shares a bit with the instance's mask and with the mesh mask of
// its geometry.
func (s *InstancedScene) visibleTo(rec *geom.InstanceRecord, mask uint8) bool {
	return rec.Mask&mask != 0 && s.tables.MaskOf(int(rec.Geometry))&mask != 0
}

func (s *InstancedScene) closest(o, d [3]float32, tmin, tmax float32, mask uint8) (InstanceHit, bool) {
	best := InstanceHit{T: tmax, Prim: geom.InvalidID, Instance: geom.InvalidID}
	for i := range s.inst.Records {
		rec := &s.inst.Records[i]
		if !s.visibleTo(rec, mask) {
			continue // culled before the object-space ray is formed
		}
		oo, dd := geom.ObjectRay(rec, o, d)
		h, ok := s.geos[rec.Geometry].closest(oo, dd, tmin, best.T, geom.DefaultMask)
		if !ok {
			continue
		}
		// Instances are visited in id order: an equal t from a later
		// instance never wins.
		if best.Instance < 0 || h.T < best.T {
			best = InstanceHit{T: h.T, U: h.U, V: h.V, Prim: h.Prim + s.tables.FaceOffset[rec.Geometry], Instance: int32(i)}
		}
	}
	return best, best.Instance >= 0
}

// Intersect is the forward pass of intersect on the instanced scene, with
// the inputs, flags, errors and cancellation of Scene.IntersectContext. A
// hit row holds t (world = object), p = o + t·d in the world (per
// component o + (t*d) in float32), n = geo_n = geom.WorldNormal of the
// object face's geom.FaceCross with geom.NormalFloor, uv and the
// barycentrics from the object-space test, the geometry as the mesh id,
// the geometry's global and local face ids, and the instance id
// (InstanceID, materialized with FlagGeometric).
func (s *InstancedScene) Intersect(ctx context.Context, o, d, tmax []float32, active []bool, flags geom.Flags) (*geom.Hits, error) {
	return s.IntersectLimits(ctx, o, d, tmax, active, geom.RayLimits{}, flags)
}

// IntersectLimits is Intersect with per-ray limits, as
// Scene.IntersectLimitsContext on a mesh-only scene: row i accepts
// t ∈ [lim.TMinAt(i, geom.TMin), tmax] and sees only the instances whose
// mask and whose geometry's mesh mask share a bit with lim.MaskAt(i).
// Empty limits give Intersect's answer bitwise. Errors add those of
// geom.CheckRayLimits.
func (s *InstancedScene) IntersectLimits(ctx context.Context, o, d, tmax []float32, active []bool, lim geom.RayLimits, flags geom.Flags) (*geom.Hits, error) {
	n, err := checkIntersect(ctx, o, d, tmax, active, lim, flags)
	if err != nil {
		return nil, err
	}
	h := geom.NewHitsZeroed(n, flags)
	if h.Flags.Has(geom.FlagGeometric) {
		h.InstanceID = make([]int32, n)
	}
	if n == 0 {
		return h, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := parallelRows(ctx, "intersect", n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s.intersectRow(h, i, o, d, tmax, active, lim)
		}
	}); err != nil {
		return nil, err
	}
	return h, nil
}

func (s *InstancedScene) intersectRow(h *geom.Hits, i int, o, d, tmax []float32, active []bool, lim geom.RayLimits) {
	oi, di, tm, ok := rayRow(i, o, d, tmax, active)
	if !ok {
		h.SetMiss(i)
		return
	}
	hit, ok := s.closest(oi, di, lim.TMinAt(i, geom.TMin), tm, lim.MaskAt(i))
	if !ok {
		h.SetMiss(i)
		return
	}
	h.T[i] = hit.T
	rec := &s.inst.Records[hit.Instance]
	var normal [3]float32
	if h.Flags&(geom.FlagGeometric|geom.FlagShadingN) != 0 {
		p0, p1, p2 := s.tables.Triangle(int(hit.Prim))
		normal = geom.WorldNormal(rec, geom.FaceCross(p0, p1, p2), geom.NormalFloor)
	}
	if h.Flags.Has(geom.FlagGeometric) {
		var p [3]float32
		for k := range 3 {
			p[k] = float32(oi[k] + float32(hit.T*di[k]))
		}
		put3(h.P, i, p)
		put3(h.GeoN, i, normal)
		put3(h.Bary, i, [3]float32{float32(float32(1-hit.U) - hit.V), hit.U, hit.V})
		h.ShapeID[i] = rec.Geometry
		h.PrimID[i] = hit.Prim
		h.LocalPrimID[i] = s.tables.FaceLocal[hit.Prim]
		h.GlobalPrimID[i] = hit.Prim
		h.InstanceID[i] = hit.Instance
	}
	if h.Flags.Has(geom.FlagShadingN) {
		put3(h.N, i, normal)
	}
	if h.Flags.Has(geom.FlagUV) {
		h.UV[2*i], h.UV[2*i+1] = hit.U, hit.V
	}
}
