package geom

import (
	"fmt"
	"math"
)

// ClosestCotangents are the upstream gradients of a closest-point record:
// per row ∂L/∂Dist (1) and ∂L/∂Point (3). A nil field is zero.
type ClosestCotangents struct {
	Dist, Point []float32
}

// Check validates the cotangent slices for n rows (a *LengthError for a
// non-nil field of another length).
func (g ClosestCotangents) Check(n int) error {
	if g.Dist != nil && len(g.Dist) != n {
		return &LengthError{Field: "cotangent Dist", Got: len(g.Dist), Want: n, PerRow: 1}
	}
	if g.Point != nil && len(g.Point) != 3*n {
		return &LengthError{Field: "cotangent Point", Got: len(g.Point), Want: 3 * n, PerRow: 3}
	}
	return nil
}

// ClosestPointsVJP is the backward pass of a closest-point query with each
// row's face and barycentric weights frozen (the forward's GlobalFaceID
// and Bary): the closest point is Q = Σ b_k·v_k and the distance
// D = |P − Q|, so
//
//	∂L/∂P   = gD·(P − Q)/D
//	∂L/∂v_k = b_k·(gQ − gD·(P − Q)/D)
//
// for the face's vertices v_k (global vertex ids from t.Faces). The
// distance gradients are exact (the minimum's envelope), the point's are
// those of the frozen weights. A row with no face (GlobalFaceID −1) or
// D = 0 contributes no distance gradient; a row with no face contributes
// nothing. Everything is float64, rows added in order into 3 values per
// global vertex. Errors: *LengthError for mismatched slices, *ArgumentError
// for a face id out of range.
func ClosestPointsVJP(t *Tables, points []float32, faces []int32, bary []float32, g ClosestCotangents) (dPoints, dVertices []float64, err error) {
	n, err := rows3("points", points)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLen("GlobalFaceID", len(faces), n, 1, false); err != nil {
		return nil, nil, err
	}
	if err := checkLen("Bary", len(bary), n, 3, false); err != nil {
		return nil, nil, err
	}
	if err := g.Check(n); err != nil {
		return nil, nil, err
	}
	nf := int32(t.NumFaces())
	for i, f := range faces {
		if f < -1 || f >= nf {
			return nil, nil, &ArgumentError{Field: "GlobalFaceID", Reason: fmt.Sprintf("row %d: face %d of %d", i, f, nf)}
		}
	}
	dPoints = make([]float64, 3*n)
	dVertices = make([]float64, len(t.Vertices))
	for i, f := range faces {
		if f < 0 {
			continue
		}
		var vid [3]int32
		var q, r [3]float64
		for k := range 3 {
			vid[k] = t.Faces[3*int(f)+k]
			b := float64(bary[3*i+k])
			for c := range 3 {
				q[c] += b * float64(t.Vertices[3*int(vid[k])+c])
			}
		}
		d2 := 0.0
		for c := range 3 {
			r[c] = float64(points[3*i+c]) - q[c]
			d2 += r[c] * r[c]
		}
		var gd [3]float64 // gD·(P − Q)/D
		if d := math.Sqrt(d2); g.Dist != nil && d > 0 {
			for c := range 3 {
				gd[c] = float64(g.Dist[i]) * r[c] / d
			}
		}
		for c := range 3 {
			dPoints[3*i+c] = gd[c]
			gq := 0.0
			if g.Point != nil {
				gq = float64(g.Point[3*i+c])
			}
			for k := range 3 {
				dVertices[3*int(vid[k])+c] += float64(bary[3*i+k]) * (gq - gd[c])
			}
		}
	}
	return dPoints, dVertices, nil
}
