package ref_test

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// The nearest point of a unit quad to three points: one above the quad,
// one beside it, one beyond the distance bound.
func ExampleScene_ClosestPoints() {
	quad := geom.Mesh{
		Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0},
		Faces:    []int32{0, 1, 2, 0, 2, 3},
	}
	tables, err := geom.BuildTables([]geom.Mesh{quad})
	if err != nil {
		fmt.Println(err)
		return
	}
	scene, err := ref.NewScene(tables)
	if err != nil {
		fmt.Println(err)
		return
	}
	points := []float32{
		0.25, 0.75, 2, // above the second triangle
		2, 0.5, 0, // beside the quad's x = 1 edge
		0.5, 0.5, 9, // farther than maxDist
	}
	c, err := scene.ClosestPoints(points, 5, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range c.Len() {
		fmt.Println(c.Valid(i), c.GlobalFaceID[i], c.Dist[i], c.Point[3*i:3*i+3], c.Bary[3*i:3*i+3])
	}
	// Output:
	// true 1 2 [0.25 0.75 0] [0.25 0.25 0.5]
	// true 0 1 [1 0.5 0] [0 0.5 0.5]
	// false -1 +Inf [0 0 0] [0 0 0]
}
