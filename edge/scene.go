package edge

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// MaxK is the largest k accepted by NearestK (spec §0.1, "BVH top-k max").
const MaxK = 16

// DistanceEpsilon is the degeneracy threshold of the edge distance tests
// (spec §0.1): a segment whose squared length is not above it is treated as
// the point at its start, and an interior closest-pair solution is accepted
// only when both squared lengths and |det| exceed it.
const DistanceEpsilon = 1e-7

// Scene bundles the vertex tables, their edge table and the edge mask that
// the queries read. Mask is nil (every edge enabled) or holds one entry per
// edge, false removing the edge from every query. Edges must have been built
// from Tables; a Scene is safe for concurrent queries as long as nobody
// mutates it.
type Scene struct {
	Tables *geom.Tables
	Edges  *Edges
	Mask   []bool
}

// NewScene returns a Scene over t with the edge table Topology(t) and no
// mask.
func NewScene(t *geom.Tables) *Scene {
	return &Scene{Tables: t, Edges: Topology(t)}
}

// SetMask installs a copy of mask (length E, or nil/empty to clear it). A
// mask of another length is a *geom.LengthError and leaves the scene
// unchanged.
func (s *Scene) SetMask(mask []bool) error {
	if len(mask) != 0 && len(mask) != s.Edges.Len() {
		return &geom.LengthError{Field: "mask", Want: s.Edges.Len(), Got: len(mask), PerRow: 1}
	}
	if len(mask) == 0 {
		s.Mask = nil
		return nil
	}
	s.Mask = append([]bool(nil), mask...)
	return nil
}

// check validates the scene itself before a query.
func (s *Scene) check() error {
	if s == nil || s.Tables == nil || s.Edges == nil {
		return &geom.ArgumentError{Field: "scene", Reason: "nil tables or edge table"}
	}
	e := s.Edges
	if len(s.Mask) != 0 && len(s.Mask) != e.Len() {
		return &geom.LengthError{Field: "mask", Want: e.Len(), Got: len(s.Mask), PerRow: 1}
	}
	nv := int32(s.Tables.NumVertices())
	n := e.Len()
	if len(e.V1) != n || len(e.Face0) != n || len(e.Face1) != n || len(e.Opposite) != n ||
		len(e.ShapeID) != n || len(e.LocalID) != n {
		return &geom.ArgumentError{Field: "edges", Reason: "per-edge slices differ in length"}
	}
	for i := range n {
		if e.V0[i] < 0 || e.V0[i] >= nv || e.V1[i] < 0 || e.V1[i] >= nv {
			return &geom.ArgumentError{Field: "edges",
				Reason: fmt.Sprintf("edge %d references a vertex outside [0,%d)", i, nv)}
		}
	}
	return nil
}

// enabled reports whether edge i is a candidate.
func (s *Scene) enabled(i int) bool { return len(s.Mask) == 0 || s.Mask[i] }

// endpoints returns the two endpoints of edge i in float64.
func (s *Scene) endpoints(i int) (a, b vec) {
	return s.vertex(s.Edges.V0[i]), s.vertex(s.Edges.V1[i])
}

func (s *Scene) vertex(v int32) vec {
	x := s.Tables.Vertices[3*v : 3*v+3]
	return vec{float64(x[0]), float64(x[1]), float64(x[2])}
}

// rows3 checks that v holds whole rows of 3 and returns the row count.
func rows3(field string, v []float32) (int, error) {
	if len(v)%3 != 0 {
		return 0, &geom.LengthError{Field: field, Want: -1, Got: len(v), PerRow: 3}
	}
	return len(v) / 3, nil
}

// checkLen checks len == n*per (or 0 when optional).
func checkLen(field string, got, n, per int, optional bool) error {
	if got == n*per || (optional && got == 0) {
		return nil
	}
	return &geom.LengthError{Field: field, Want: n * per, Got: got, PerRow: per}
}

// load3 returns row i of v in float64 and whether it is finite.
func load3(v []float32, i int) (vec, bool) {
	r := vec{float64(v[3*i]), float64(v[3*i+1]), float64(v[3*i+2])}
	return r, finite(r[0]) && finite(r[1]) && finite(r[2])
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func store3(dst []float32, i int, v vec) {
	dst[3*i], dst[3*i+1], dst[3*i+2] = float32(v[0]), float32(v[1]), float32(v[2])
}
