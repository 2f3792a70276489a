package ref_test

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
)

// Closest hits, a mirror bounce and a visibility query on a unit quad.
func Example() {
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

	// Two rays: one hits the second triangle, one misses.
	o := []float32{0.25, 0.75, 1, 2, 2, 1}
	d := []float32{0, 0, -1, 0, 0, -1}
	hits, err := scene.Intersect(o, d, nil, nil, geom.FlagsAll)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range hits.Len() {
		fmt.Println(hits.Valid(i), hits.T[i], hits.PrimID[i], hits.GeoN[3*i:3*i+3])
	}

	refl, _ := scene.TraceReflections([]float32{0.5, 0.5, 1}, []float32{0, 0, -1}, nil, nil, 2)
	fmt.Println(refl.Valid, refl.T, refl.PrimIDs, refl.ImageSources[:3])

	vis, _ := scene.Visible([]float32{0.5, 0.5, 1, 0.5, 0.5, 1}, []float32{0.5, 0.5, -1, 2, 2, 1}, nil)
	fmt.Println(vis)
	// Output:
	// true 1 1 [0 0 1]
	// false +Inf -1 [0 0 0]
	// [true false] [1 1e+08] [0 -1] [0.5 0.5 -1]
	// [false true]
}
