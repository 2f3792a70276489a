package geom

import "math"

// ClosestPoints is the record of a closest-point query: for every query
// point, the face of the scene nearest to it. Point and Bary hold 3 values
// per row, the other fields 1. A miss (no face within the distance bound),
// an inactive row or a row with a non-finite coordinate holds Dist = +Inf,
// zero vectors and InvalidID ids.
type ClosestPoints struct {
	// Dist is the distance from the query point to Point (+Inf on a miss).
	// A hit farther than math.MaxFloat32 also rounds to +Inf: Valid reads
	// the ids, not Dist.
	Dist []float32
	// Point is the closest point on the face.
	Point []float32
	// Bary is the barycentric weights of the face's vertices v0, v1, v2
	// (in the order the face lists them) that give Point.
	Bary []float32
	// ShapeID is the mesh of the face.
	ShapeID []int32
	// LocalFaceID is the face index within its mesh.
	LocalFaceID []int32
	// GlobalFaceID is the global face id.
	GlobalFaceID []int32
}

// NewClosestPoints allocates n rows, every row set to the miss record.
func NewClosestPoints(n int) *ClosestPoints {
	c := NewClosestPointsZeroed(n)
	for i := range n {
		c.SetMiss(i)
	}
	return c
}

// NewClosestPointsZeroed is NewClosestPoints without the miss record: every
// value is zero, which is not a valid row, so the caller must write every
// row (a face, or SetMiss). A parallel producer uses it to initialize rows
// where it writes them instead of in a serial pass before.
func NewClosestPointsZeroed(n int) *ClosestPoints {
	return &ClosestPoints{
		Dist:         make([]float32, n),
		Point:        make([]float32, 3*n),
		Bary:         make([]float32, 3*n),
		ShapeID:      make([]int32, n),
		LocalFaceID:  make([]int32, n),
		GlobalFaceID: make([]int32, n),
	}
}

// Len is the number of rows.
func (c *ClosestPoints) Len() int { return len(c.Dist) }

// Valid reports whether row i holds a face (GlobalFaceID[i] >= 0).
func (c *ClosestPoints) Valid(i int) bool { return c.GlobalFaceID[i] >= 0 }

// SetMiss writes the miss record into row i.
func (c *ClosestPoints) SetMiss(i int) {
	c.Dist[i] = float32(math.Inf(1))
	for _, v := range [][]float32{c.Point, c.Bary} {
		v[3*i], v[3*i+1], v[3*i+2] = 0, 0, 0
	}
	c.ShapeID[i], c.LocalFaceID[i], c.GlobalFaceID[i] = InvalidID, InvalidID, InvalidID
}

// CheckPoints validates the slices of a point batch and returns its row
// count N = len(points)/3: active must have N values or none.
func CheckPoints(points []float32, active []bool) (int, error) {
	n, err := rows3("points", points)
	if err != nil {
		return 0, err
	}
	if err := checkLen("active", len(active), n, 1, true); err != nil {
		return 0, err
	}
	return n, nil
}

// CheckMaxDist validates the distance bound of a closest-point query and
// returns its square in float64 (exact, since the square of a float32 fits
// a float64): +Inf when maxDist ≤ 0 or maxDist = +Inf (unbounded). A NaN
// bound is an *ArgumentError.
func CheckMaxDist(maxDist float32) (float64, error) {
	m := float64(maxDist)
	switch {
	case math.IsNaN(m):
		return 0, &ArgumentError{Field: "maxDist", Reason: "NaN"}
	case m <= 0 || math.IsInf(m, 1):
		return math.Inf(1), nil
	}
	return m * m, nil
}
