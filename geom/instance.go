package geom

import (
	"fmt"
	"math"
	"sync"
)

// Sentinel errors of instancing. Both also match ErrInvalidArgument.
var (
	// ErrInvalidTransform matches every *InstanceError about a transform:
	// a non-finite entry, a 4×4 matrix whose last row is not (0, 0, 0, 1),
	// or a linear part that cannot be inverted in float32.
	ErrInvalidTransform = fmt.Errorf("%w: invalid instance transform", ErrInvalidArgument)
	// ErrInstanceGeometry matches an instance whose geometry id names no
	// mesh of the scene, and an instance index out of range.
	ErrInstanceGeometry = fmt.Errorf("%w: invalid instance", ErrInvalidArgument)
	// ErrNoInstances is returned for an empty instance list.
	ErrNoInstances = fmt.Errorf("%w: no instances", ErrInvalidArgument)
)

// MaxInstances is the largest number of instances of a scene: instance ids
// stay below the 2^24 instance ids every OptiX device accepts.
const MaxInstances = 1 << 24

// InstanceError names a rejected instance (its index in the list, or −1
// when a transform was checked on its own) and why. It matches
// ErrInvalidTransform or ErrInstanceGeometry, and through them
// ErrInvalidArgument.
type InstanceError struct {
	Instance int
	Reason   string
	Kind     error // ErrInvalidTransform or ErrInstanceGeometry
}

// Error implements error.
func (e *InstanceError) Error() string {
	if e.Instance < 0 {
		return fmt.Sprintf("%v: %s", e.Kind, e.Reason)
	}
	return fmt.Sprintf("%v: instance %d: %s", e.Kind, e.Instance, e.Reason)
}

// Unwrap returns the sentinel the error matches.
func (e *InstanceError) Unwrap() error { return e.Kind }

// Transform is an affine transform from an instance's object space to the
// world, row-major 3×4 (the layout of OptixInstance.transform):
//
//	world = ( T[0]·x + T[1]·y + T[2]·z + T[3],
//	          T[4]·x + T[5]·y + T[6]·z + T[7],
//	          T[8]·x + T[9]·y + T[10]·z + T[11] )
type Transform [12]float32

// Identity is the identity transform.
var Identity = Transform{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}

// TransformFrom4x4 returns the 3×4 transform of a row-major 4×4 matrix
// whose last row is exactly (0, 0, 0, 1); any other last row is
// ErrInvalidTransform (projective transforms are not instances).
func TransformFrom4x4(m [16]float32) (Transform, error) {
	if m[12] != 0 || m[13] != 0 || m[14] != 0 || m[15] != 1 {
		return Transform{}, &InstanceError{Instance: -1, Kind: ErrInvalidTransform,
			Reason: fmt.Sprintf("last row (%v, %v, %v, %v) is not (0, 0, 0, 1): not affine", m[12], m[13], m[14], m[15])}
	}
	var t Transform
	copy(t[:], m[:12])
	return t, nil
}

// Instance places mesh Geometry of the scene in the world through
// Transform. Several instances may share a geometry. Mask is the
// instance's 8-bit visibility mask (nil: DefaultMask): a row sees the
// instance only when its ray mask shares a bit with it (and, as on a
// mesh-only scene, with the mask of the mesh hit).
type Instance struct {
	Geometry  int
	Transform Transform
	Mask      *uint8
}

// InstanceRecord is one instance as the queries read it: the geometry, the
// transform and the float32 inverse of its linear part (row-major 3×3),
// computed once on the host (InverseLinear) so that every backend maps
// rays to object space with the same numbers.
type InstanceRecord struct {
	Geometry  int32
	Transform Transform
	Inverse   [9]float32
	// Mask is the instance's visibility mask: BuildInstances writes
	// DefaultMask for a nil Instance.Mask; 0 (also the zero value of a
	// record assembled by hand) hides the instance from every ray.
	Mask uint8
}

// Instances is the instance table of a scene: one record per instance, in
// instance-id order. Only SetTransforms mutates it; callers serialize it
// against readers.
type Instances struct {
	Records []InstanceRecord
}

// BuildInstances validates the instances against the scene's tables (each
// geometry id must name a mesh, each transform be finite and invertible)
// and computes their records. Errors: ErrNoInstances for an empty list, a
// *InstanceError otherwise.
func BuildInstances(t *Tables, in []Instance) (*Instances, error) {
	if len(in) == 0 {
		return nil, ErrNoInstances
	}
	if len(in) > MaxInstances {
		return nil, &InstanceError{Instance: -1, Kind: ErrInstanceGeometry,
			Reason: fmt.Sprintf("%d instances exceed the limit of %d", len(in), MaxInstances)}
	}
	x := &Instances{Records: make([]InstanceRecord, len(in))}
	for i, inst := range in {
		if inst.Geometry < 0 || inst.Geometry >= t.NumMeshes() {
			return nil, &InstanceError{Instance: i, Kind: ErrInstanceGeometry,
				Reason: fmt.Sprintf("geometry %d not in [0,%d)", inst.Geometry, t.NumMeshes())}
		}
		inv, err := InverseLinear(inst.Transform)
		if err != nil {
			err.Instance = i
			return nil, err
		}
		m := DefaultMask
		if inst.Mask != nil {
			m = *inst.Mask
		}
		x.Records[i] = InstanceRecord{Geometry: int32(inst.Geometry), Transform: inst.Transform, Inverse: inv, Mask: m}
	}
	return x, nil
}

// Len is the number of instances.
func (x *Instances) Len() int { return len(x.Records) }

// SetTransforms replaces the transforms of instances first, first+1, …,
// first+len(xf)−1. Every transform is checked before any is written: on
// error nothing changes.
func (x *Instances) SetTransforms(first int, xf []Transform) error {
	if first < 0 || first > x.Len() || len(xf) > x.Len()-first {
		return &InstanceError{Instance: first, Kind: ErrInstanceGeometry,
			Reason: fmt.Sprintf("%d transforms from instance %d exceed the %d instances", len(xf), first, x.Len())}
	}
	scratch := inverseScratch.Get().(*[][9]float32)
	defer inverseScratch.Put(scratch)
	if cap(*scratch) < len(xf) {
		*scratch = make([][9]float32, len(xf))
	}
	inv := (*scratch)[:len(xf)]
	for k := range xf {
		v, err := InverseLinear(xf[k])
		if err != nil {
			err.Instance = first + k
			return err
		}
		inv[k] = v
	}
	for k := range xf {
		r := &x.Records[first+k]
		r.Transform, r.Inverse = xf[k], inv[k]
	}
	return nil
}

// inverseScratch holds SetTransforms' inverses until every transform has
// been checked, reused across calls.
var inverseScratch = sync.Pool{New: func() any { return new([][9]float32) }}

// Clone returns a deep copy.
func (x *Instances) Clone() *Instances {
	return &Instances{Records: append([]InstanceRecord(nil), x.Records...)}
}

// InverseLinear returns the inverse of the linear part of t (row-major
// 3×3), computed in float64 by the adjugate and rounded once per entry to
// float32. A non-finite entry of t, a zero determinant or an inverse that
// overflows float32 is an *InstanceError (ErrInvalidTransform) with
// Instance −1.
func InverseLinear(t Transform) ([9]float32, *InstanceError) {
	for k, v := range t {
		if !isFinite32(v) {
			return [9]float32{}, &InstanceError{Instance: -1, Kind: ErrInvalidTransform,
				Reason: fmt.Sprintf("entry %d is %v, not finite", k, v)}
		}
	}
	a := [9]float64{float64(t[0]), float64(t[1]), float64(t[2]), float64(t[4]), float64(t[5]),
		float64(t[6]), float64(t[8]), float64(t[9]), float64(t[10])}
	adj := [9]float64{
		a[4]*a[8] - a[5]*a[7], a[2]*a[7] - a[1]*a[8], a[1]*a[5] - a[2]*a[4],
		a[5]*a[6] - a[3]*a[8], a[0]*a[8] - a[2]*a[6], a[2]*a[3] - a[0]*a[5],
		a[3]*a[7] - a[4]*a[6], a[1]*a[6] - a[0]*a[7], a[0]*a[4] - a[1]*a[3],
	}
	det := a[0]*adj[0] + a[1]*adj[3] + a[2]*adj[6]
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return [9]float32{}, &InstanceError{Instance: -1, Kind: ErrInvalidTransform,
			Reason: fmt.Sprintf("linear part has determinant %v: not invertible", det)}
	}
	var inv [9]float32
	for k := range adj {
		inv[k] = float32(adj[k] / det)
		if !isFinite32(inv[k]) {
			return [9]float32{}, &InstanceError{Instance: -1, Kind: ErrInvalidTransform,
				Reason: "the inverse of the linear part overflows float32"}
		}
	}
	return inv, nil
}
