package geom

import "math"

// Contract constants (operation spec §0.1). The float32 constants are the
// float32 roundings of the decimal values, exactly as a CUDA kernel writing
// the literal with an f suffix sees them.
const (
	// TMin is the lower bound of the ray interval of intersect ("SmallEpsilon").
	TMin float32 = 1e-6
	// MultipathTMin is the lower bound of the ray interval used by reflections,
	// visibility, accumulation and diffraction.
	MultipathTMin float32 = 1e-5
	// MultipathBias is the offset along the new direction applied when a
	// reflection is re-launched, and the shrink applied to segment endpoints.
	MultipathBias float32 = 1e-5
	// MinSegmentLength is the segment length at or below which a visibility
	// query reports "visible" without tracing.
	MinSegmentLength float32 = 2e-5
	// ReflectionMiss is both the finite trace tmax of multipath operations and
	// the t written into an empty reflection slot.
	ReflectionMiss float32 = 1e8
	// DefaultTMax is the tmax of intersect when the batch carries none
	// (FLT_MAX, 3.4028235e38).
	DefaultTMax float32 = math.MaxFloat32
	// InvalidID is the id written for a miss, an inactive row or an empty slot.
	InvalidID int32 = -1
	// BVHStackDepth is the traversal stack depth of the CUDA triangle BVH; a
	// GPU tree taller than this is rejected at build time.
	BVHStackDepth = 64
	// NormalFloor is the floor of |e1×e2|² under the reciprocal square root
	// when intersect derives its unit face normal.
	NormalFloor float32 = 1e-20
	// ReflectionNormalFloor is the floor of |e1×e2|² under the reciprocal
	// square root when trace_reflections derives its mirror normal.
	ReflectionNormalFloor float32 = 1e-12
	// ReciprocalFloor is the magnitude below which a direction component is
	// replaced by ±ReciprocalLarge in the slab test's reciprocal direction.
	ReciprocalFloor float32 = 1e-20
	// ReciprocalLarge is the substitute reciprocal of a tiny direction
	// component in the slab test.
	ReciprocalLarge float32 = 1e20
)
