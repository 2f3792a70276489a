package workload_test

import (
	"fmt"

	"github.com/rayd-go/rayd/internal/workload"
)

// The light configuration, scaled down to a handful of rays.
func ExampleConfig_Build() {
	cfg := workload.Light.Scaled(4)
	mesh, o, d := cfg.Build()
	fmt.Println(cfg.Name, cfg.Kind, mesh.NumVertices(), mesh.NumFaces(), len(o)/3, len(d)/3)
	// Output: light grid 36864 72962 4 4
}

func ExampleGridMesh() {
	m := workload.GridMesh(1, 2)
	fmt.Println(m.Vertices)
	fmt.Println(m.Faces)
	// Output:
	// [-1 -1 0 1 -1 0 -1 1 0 1 1 0]
	// [0 1 2 1 3 2]
}
