package geom

import "math"

// Hits is the intersection record of a batch (spec §1.6) as flat
// structure-of-arrays slices. T always has one value per row; P, N, GeoN and
// Bary hold 3 per row, UV 2 per row, the id slices 1 per row, and every
// field that Flags does not select is nil. A miss or inactive row holds
// t = +Inf, zero vectors and InvalidID ids.
type Hits struct {
	// Flags records which fields are materialized.
	Flags Flags
	// T is the ray parameter of the closest hit (+Inf on a miss).
	T []float32
	// P is the hit point o + t·d (FlagGeometric).
	P []float32
	// N is the unit face normal (FlagShadingN); equal to GeoN.
	N []float32
	// GeoN is the unit face normal, not flipped toward the ray (FlagGeometric).
	GeoN []float32
	// Bary is (1−u−v, u, v), the weights of v0, v1, v2 (FlagGeometric).
	Bary []float32
	// UV is the barycentric pair (u, v) (FlagUV).
	UV []float32
	// ShapeID is the mesh of the hit face (FlagGeometric).
	ShapeID []int32
	// PrimID is the global face id (FlagGeometric).
	PrimID []int32
	// LocalPrimID is the face index within its mesh (FlagGeometric).
	LocalPrimID []int32
	// GlobalPrimID is the global face id (FlagGeometric).
	GlobalPrimID []int32
	// InstanceID is the instance of the hit (FlagGeometric on a scene with
	// instances; nil on a mesh-only scene). ShapeID is then the instanced
	// geometry and the prim ids are that geometry's faces.
	InstanceID []int32
}

// NewHits allocates a record of n rows for the fields selected by flags
// (bits outside FlagsAll are dropped), every row set to the miss record.
func NewHits(n int, flags Flags) *Hits {
	h := NewHitsZeroed(n, flags)
	inf := float32(math.Inf(1))
	for i := range n {
		h.T[i] = inf
	}
	for _, ids := range [][]int32{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID} {
		for i := range ids {
			ids[i] = InvalidID
		}
	}
	return h
}

// NewHitsZeroed is NewHits without the miss record: every value is zero,
// which is not a valid row, so the caller must write every row (a hit, or
// SetMiss). A parallel producer uses it to initialize rows where it writes
// them instead of in a serial pass before.
func NewHitsZeroed(n int, flags Flags) *Hits {
	flags &= FlagsAll
	h := &Hits{Flags: flags, T: make([]float32, n)}
	if flags.Has(FlagGeometric) {
		h.P = make([]float32, 3*n)
		h.GeoN = make([]float32, 3*n)
		h.Bary = make([]float32, 3*n)
		h.ShapeID = make([]int32, n)
		h.PrimID = make([]int32, n)
		h.LocalPrimID = make([]int32, n)
		h.GlobalPrimID = make([]int32, n)
	}
	if flags.Has(FlagShadingN) {
		h.N = make([]float32, 3*n)
	}
	if flags.Has(FlagUV) {
		h.UV = make([]float32, 2*n)
	}
	return h
}

// Len is the number of rows.
func (h *Hits) Len() int { return len(h.T) }

// RowBytes is the size of one row of h (Flags.RowBytes).
func (h *Hits) RowBytes() int { return h.Flags.RowBytes() }

// SetMiss writes the miss record into row i of every materialized field.
func (h *Hits) SetMiss(i int) {
	h.T[i] = float32(math.Inf(1))
	for _, v := range [][]float32{h.P, h.N, h.GeoN, h.Bary} {
		if v != nil {
			v[3*i], v[3*i+1], v[3*i+2] = 0, 0, 0
		}
	}
	if h.UV != nil {
		h.UV[2*i], h.UV[2*i+1] = 0, 0
	}
	for _, ids := range [][]int32{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID, h.InstanceID} {
		if ids != nil {
			ids[i] = InvalidID
		}
	}
}

// Valid reports whether row i holds a hit: ShapeID[i] >= 0 when the ids are
// materialized, otherwise whether T[i] is finite (spec §1.5 is_valid).
func (h *Hits) Valid(i int) bool {
	if h.ShapeID != nil {
		return h.ShapeID[i] >= 0
	}
	return !math.IsInf(float64(h.T[i]), 0) && !math.IsNaN(float64(h.T[i]))
}

// Reflections is the record of trace_reflections (spec §3.1) for N rows and
// Bounces slots per row, slot b of row i at index i*Bounces+b (three values
// from 3*(i*Bounces+b) in ImageSources). An empty slot holds Valid false,
// T = ReflectionMiss, PrimIDs = InvalidID and a zero image source.
type Reflections struct {
	// Bounces is the number of slots per row (max_bounces).
	Bounces int
	// Valid tells whether slot b holds a hit.
	Valid []bool
	// T is the hit parameter along that bounce's ray (ReflectionMiss if empty).
	T []float32
	// PrimIDs is the global face id of the bounce (InvalidID if empty).
	PrimIDs []int32
	// ImageSources is the image of the ray origin after the bounce, 3 per slot.
	ImageSources []float32
}

// NewReflections allocates n rows of b slots, every slot empty. The size
// is the caller's: validate it first with CheckReflections, which refuses
// a bounce count above MaxBounces and a record larger than the memory it
// may take.
func NewReflections(n, b int) *Reflections {
	r := NewReflectionsZeroed(n, b)
	for i := range r.T {
		r.T[i] = ReflectionMiss
		r.PrimIDs[i] = InvalidID
	}
	return r
}

// NewReflectionsZeroed is NewReflections without the empty-slot record:
// every value is zero, so the caller must write every row (SetMiss, then
// its hits). Validate the size with CheckReflections first.
func NewReflectionsZeroed(n, b int) *Reflections {
	return &Reflections{
		Bounces:      b,
		Valid:        make([]bool, n*b),
		T:            make([]float32, n*b),
		PrimIDs:      make([]int32, n*b),
		ImageSources: make([]float32, 3*n*b),
	}
}

// Len is the number of rows.
func (r *Reflections) Len() int {
	if r.Bounces <= 0 {
		return 0
	}
	return len(r.T) / r.Bounces
}

// SetMiss empties every slot of row i.
func (r *Reflections) SetMiss(i int) {
	for s := i * r.Bounces; s < (i+1)*r.Bounces; s++ {
		r.Valid[s] = false
		r.T[s] = ReflectionMiss
		r.PrimIDs[s] = InvalidID
		r.ImageSources[3*s], r.ImageSources[3*s+1], r.ImageSources[3*s+2] = 0, 0, 0
	}
}

// ReflectionRowBytes is the size of one row of a reflection record with b
// bounces: 9 bytes per bounce for the reduced record (valid, t, prim_ids),
// 21 per bounce when the image sources are included.
func ReflectionRowBytes(b int, images bool) int {
	if images {
		return 21 * b
	}
	return 9 * b
}
