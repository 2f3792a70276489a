package rayd_test

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd"
)

// ExampleScene_ClosestPoint finds the nearest face of two points on a
// unit cube on the CPU backend, signed by the winding number, and the
// gradient of the distance with respect to the points. The second point
// lies above the diagonal that faces 0 and 1 share: the tie goes to face 0.
func ExampleScene_ClosestPoint() {
	ctx := context.Background()
	cube := rayd.Mesh{
		Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1},
		Faces: []int32{0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
			2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3},
	}
	scene, err := rayd.NewScene(ctx, []rayd.Mesh{cube}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer scene.Close()
	points := []float32{0.25, 0.5, 1.5, 0.5, 0.5, 0.4}
	res, err := scene.ClosestPoint(ctx, points, 0, rayd.ClosestOptions{Sign: rayd.SignWinding})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range res.Len() {
		fmt.Printf("face %d (mesh %d, local %d) point %v distance %.2f sign %+d\n", res.GlobalFaceID[i],
			res.ShapeID[i], res.LocalFaceID[i], res.Point[3*i:3*i+3], res.Dist[i], res.Sign[i])
	}
	dp, _, err := scene.ClosestPointVJP(ctx, points, res, rayd.ClosestCotangent{Dist: []float32{1, 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("d distance / d point:", dp)
	// Output:
	// face 3 (mesh 0, local 3) point [0.25 0.5 1] distance 0.50 sign +1
	// face 0 (mesh 0, local 0) point [0.5 0.5 0] distance 0.40 sign -1
	// d distance / d point: [0 0 1 0 0 1]
}
