package geom

// IntersectCotangents are the upstream gradients of intersect's outputs:
// per row, ∂L/∂t (1), ∂L/∂p (3), ∂L/∂n (3), ∂L/∂geo_n (3), ∂L/∂uv (2) and
// ∂L/∂barycentric (3). A nil field is zero.
type IntersectCotangents struct {
	T, P, N, GeoN, UV, Bary []float32
}

// Check validates the cotangent slices for n rows: each non-nil field holds
// exactly its per-row count times n values (a *LengthError otherwise).
func (g IntersectCotangents) Check(n int) error {
	for _, f := range []struct {
		name string
		v    []float32
		per  int
	}{{"T", g.T, 1}, {"P", g.P, 3}, {"N", g.N, 3}, {"GeoN", g.GeoN, 3}, {"UV", g.UV, 2}, {"Bary", g.Bary, 3}} {
		if f.v != nil && len(f.v) != f.per*n {
			return &LengthError{Field: "cotangent " + f.name, Got: len(f.v), Want: f.per * n, PerRow: f.per}
		}
	}
	return nil
}
