package rayd

import (
	"context"

	"github.com/rayd-go/rayd/geom"
)

// Transform is an affine object-to-world transform, row-major 3×4 (the
// layout of OptixInstance.transform): world = T[0:3]·x + T[3], … .
type Transform = geom.Transform

// Instance places mesh Geometry of a scene in the world through
// Transform; several instances may share a geometry.
type Instance = geom.Instance

// InstanceError names a rejected instance or transform; it matches
// ErrInvalidTransform or ErrInstanceGeometry, and ErrInvalidArgument.
type InstanceError = geom.InstanceError

var (
	// ErrInvalidTransform matches a transform with a non-finite entry, a
	// non-invertible linear part, or a 4×4 matrix that is not affine.
	ErrInvalidTransform = geom.ErrInvalidTransform
	// ErrInstanceGeometry matches an instance whose geometry id names no
	// mesh, and an instance index out of range.
	ErrInstanceGeometry = geom.ErrInstanceGeometry
)

// IdentityTransform is the identity transform.
var IdentityTransform = geom.Identity

// TransformFrom4x4 returns the transform of a row-major 4×4 affine matrix
// (last row exactly 0, 0, 0, 1; anything else is ErrInvalidTransform).
func TransformFrom4x4(m [16]float32) (Transform, error) { return geom.TransformFrom4x4(m) }

// WithInstances makes the scene's meshes geometries placed in the world by
// instances (one level of instancing): queries see the union of the
// instances only, a mesh that no instance names is never hit, and a mesh
// may be named by any number of instances. Hits then carry InstanceID
// (with FlagGeometric); ShapeID is the instanced mesh and the prim ids are
// its faces. Instance ids are the positions in the list. Every instance is
// checked by NewScene (ErrInstanceGeometry, ErrInvalidTransform); an empty
// list is refused here.
//
// Which operations an instanced scene runs is listed in the README
// ("Instances"): Intersect (with Rays.TMin, Rays.Mask, the meshes' masks
// and the instances' masks, SetInstanceMask), UpdateVertices,
// SetInstanceTransform(s), SetMeshMask and Rebuild; the others return an
// *UnsupportedError naming the operation.
// Instanced scenes run on the CPU backend, on the CUDA BVH (BackendCUDA, a
// two-level walk bitwise equal to the CPU reference), on OptiX
// (BackendOptiX: an IAS over one GAS per geometry, equal to the reference
// under the OptiX tie rule — t to within rounding, exact ties to either
// face or instance — and honouring per-ray TMin and Mask, instance masks
// and mesh masks) and on a replicated scene of CUDA replicas (rows split
// across the replicas, each answering with the one-GPU kernel; transform
// updates broadcast to every replica). BackendAuto picks the CUDA BVH for
// them, whose record is the reference's bit for bit.
func WithInstances(instances []Instance) Option {
	return func(c *config) error {
		if len(instances) == 0 {
			return geom.ErrNoInstances
		}
		c.instances = append([]Instance(nil), instances...)
		return nil
	}
}

// setupInstances builds the instance table of a new scene and hands it
// to the engine; a scene without WithInstances is left untouched.
func (s *Scene) setupInstances(ctx context.Context, in []Instance) error {
	if in == nil {
		return nil
	}
	x, err := geom.BuildInstances(s.tables, in)
	if err != nil {
		return err
	}
	if err := s.eng.SetInstances(ctx, x); err != nil {
		return err
	}
	s.inst = x
	s.eng = &instancedEngine{Engine: s.eng, inst: x}
	return nil
}

// NumInstances returns the number of instances (0 on a mesh-only scene).
func (s *Scene) NumInstances() int {
	if s.inst == nil {
		return 0
	}
	return s.inst.Len()
}

// Instances returns the scene's instances with their current transforms
// and masks (Mask nil for DefaultMask; nil on a mesh-only scene); the
// slice is a copy.
func (s *Scene) Instances() []Instance {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.inst == nil {
		return nil
	}
	out := make([]Instance, s.inst.Len())
	for i, r := range s.inst.Records {
		out[i] = Instance{Geometry: int(r.Geometry), Transform: r.Transform}
		if r.Mask != DefaultMask {
			out[i].Mask = Mask(r.Mask)
		}
	}
	return out
}

// SetInstanceTransform replaces the transform of instance i; see
// SetInstanceTransforms.
func (s *Scene) SetInstanceTransform(ctx context.Context, i int, t Transform) error {
	return s.SetInstanceTransforms(ctx, i, []Transform{t})
}

// SetInstanceTransforms replaces the transforms of the instances first,
// first+1, …, first+len(t)−1. Only the instance level changes: the
// geometries are untouched. Every transform is checked before any is
// written (ErrInvalidTransform; ErrInstanceGeometry for a range outside
// the instances; ErrInvalidArgument on a mesh-only scene): on error the
// scene is unchanged. It waits for running queries.
func (s *Scene) SetInstanceTransforms(ctx context.Context, first int, t []Transform) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.inst == nil {
		return s.noInstances()
	}
	old := append([]geom.InstanceRecord(nil), s.inst.Records...)
	if err := s.inst.SetTransforms(first, t); err != nil {
		return err
	}
	if err := s.eng.UpdateInstances(ctx, first, len(t)); err != nil {
		copy(s.inst.Records, old) // the caller-visible transforms change only on success
		return err
	}
	return nil
}
