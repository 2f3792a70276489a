package edge_test

import (
	"fmt"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
)

// The unit quad has four boundary edges and one interior diagonal; the
// point below the quad is nearest the edge (0,1).
func Example() {
	quad := geom.Mesh{
		Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0},
		Faces:    []int32{0, 1, 2, 0, 2, 3},
	}
	tb, err := geom.BuildTables([]geom.Mesh{quad})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := edge.NewScene(tb)
	for i := range s.Edges.Len() {
		fmt.Println(i, s.Edges.V0[i], s.Edges.V1[i], s.Edges.IsBoundary(i))
	}
	r, err := s.NearestPoint([]float32{0.25, -2, 0}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.GlobalEdgeID[0], r.Distance[0], r.EdgeT[0])
	// Output:
	// 0 0 1 true
	// 1 0 2 false
	// 2 0 3 true
	// 3 1 2 true
	// 4 2 3 true
	// 0 2 0.25
}
