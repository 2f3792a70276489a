package simdev

import (
	"slices"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// state is what a launch reads on its device besides its inputs: the
// reference scene (refit by SyncGeometry), the vertex tables as of the last
// SyncGeometry (the build's until then: a staged UpdateVertices is not yet
// visible, as for the scene), the edge table, built from the faces on the
// first edge query, and the edge mask of the last SetEdgeMask. Only the
// operations of the replica's compute queue touch it, in queue order.
type state struct {
	scene  *ref.Scene
	tables *geom.Tables
	edges  *edge.Edges
	mask   []bool
}

func newState(scene *ref.Scene, t *geom.Tables) *state {
	s := &state{scene: scene}
	s.commit(t)
	return s
}

// commit takes a copy of t's vertices (the faces and offsets never change).
func (s *state) commit(t *geom.Tables) {
	c := *t
	c.Vertices = slices.Clone(t.Vertices)
	s.tables = &c
}

// edgeScene is the edge scene of the committed vertices and the mask. A
// mask of the wrong length fails the query with a *geom.LengthError.
func (s *state) edgeScene() *edge.Scene {
	if s.edges == nil {
		s.edges = edge.Topology(s.tables)
	}
	return &edge.Scene{Tables: s.tables, Edges: s.edges, Mask: s.mask}
}
