package geom_test

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// A 4×4 affine matrix becomes a Transform; a projective one is refused.
// ObjectRay maps a world ray into the instance's object space without
// renormalising the direction, so t is the same in both spaces.
func ExampleObjectRay() {
	xf, err := geom.TransformFrom4x4([16]float32{2, 0, 0, 1, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1})
	if err != nil {
		panic(err)
	}
	_, err = geom.TransformFrom4x4([16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0})
	fmt.Println("projective refused:", errors.Is(err, geom.ErrInvalidTransform))

	tb, err := geom.BuildTables([]geom.Mesh{{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}})
	if err != nil {
		panic(err)
	}
	x, err := geom.BuildInstances(tb, []geom.Instance{{Geometry: 0, Transform: xf}})
	if err != nil {
		panic(err)
	}
	o, d := geom.ObjectRay(&x.Records[0], [3]float32{2, 0.5, 4}, [3]float32{0, 0, -1})
	fmt.Println("object origin:", o, "object direction:", d)
	// Output:
	// projective refused: true
	// object origin: [0.5 0.25 2] object direction: [0 0 -0.5]
}
