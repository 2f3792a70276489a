package rayd_test

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd"
)

// A wall (two triangles, prims 0 and 1) in the plane x = 0 between y, z
// in [−1, 1]: visible_pair from a point in front of it, one target behind
// the wall and one beside it; ignoring the wall's prims clears the first.
func ExampleScene_VisiblePair() {
	ctx := context.Background()
	wall := rayd.Mesh{Vertices: []float32{0, -1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{wall}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	start := []float32{-1, 0, 0}
	behind, beside := []float32{1, 0, 0}, []float32{-1, 3, 0}
	a, b, err := s.VisiblePair(ctx, start, behind, beside, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("behind:", a[0], "beside:", b[0])
	a, _, err = s.VisiblePair(ctx, start, behind, beside, []int32{0, 1}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("behind, wall ignored:", a[0])
	// Output:
	// behind: false beside: true
	// behind, wall ignored: true
}

// visible_edge: an edge that pokes out above the same wall is visible from
// behind it through its upper samples; visible_chain reports where a
// three-point path first crosses the wall.
func ExampleScene_VisibleChain() {
	ctx := context.Background()
	wall := rayd.Mesh{Vertices: []float32{0, -1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{wall}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	vis, err := s.VisibleEdge(ctx, rayd.EdgeSamples{Source: []float32{-1, 0, 0}, Position: []float32{1, 0, 0},
		Direction: []float32{0, 0, 1}, TMin: []float32{0}, TMax: []float32{4}})
	if err != nil {
		panic(err)
	}
	fmt.Println("edge visible:", vis[0])
	path := []float32{-1, 2, 0, -1, 0, 0, 1, 0, 0} // beside, in front, behind
	c, err := s.VisibleChain(ctx, path, 3, []int32{2}, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("all visible:", c.AllVisible[0], "first blocked segment:", c.FirstBlockedSegment[0])
	// Output:
	// edge visible: true
	// all visible: false first blocked segment: 1
}
