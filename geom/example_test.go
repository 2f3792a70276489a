package geom_test

import (
	"fmt"

	"github.com/rayd-go/rayd/geom"
)

// A ray straight down the z axis onto the unit triangle.
func ExampleWatertight() {
	o := [3]float32{0.25, 0.25, -1}
	d := [3]float32{0, 0, 1}
	p0 := [3]float32{0, 0, 0}
	p1 := [3]float32{1, 0, 0}
	p2 := [3]float32{0, 1, 0}
	t, u, v, ok := geom.Watertight(o, d, p0, p1, p2, geom.TMin, geom.DefaultTMax)
	fmt.Println(ok, t, u, v)
	// Output: true 1 0.25 0.25
}

// Two meshes concatenated into the scene-global tables.
func ExampleBuildTables() {
	tri := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	quad := geom.Mesh{
		Vertices: []float32{0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1},
		Faces:    []int32{0, 1, 2, 0, 2, 3},
	}
	tb, err := geom.BuildTables([]geom.Mesh{tri, quad})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tb.Faces)
	fmt.Println(tb.FaceShape, tb.FaceLocal, tb.FaceOffset)
	// Output:
	// [0 1 2 3 4 5 3 5 6]
	// [0 1 1] [0 0 1] [0 1]
}

func ExampleFlags_RowBytes() {
	for _, f := range []geom.Flags{geom.FlagsNone, geom.FlagGeometric, geom.FlagShadingN, geom.FlagUV, geom.FlagsAll} {
		fmt.Println(f, f.RowBytes())
	}
	// Output:
	// None 4
	// Geometric 56
	// ShadingN 16
	// UV 12
	// All 76
}

func ExampleMesh_Validate() {
	m := geom.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 3}}
	fmt.Println(m.Validate())
	// Output: geom: invalid mesh: faces[2]: face 0: vertex index 3 out of range [0,3)
}
