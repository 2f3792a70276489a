package rayd_test

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd"
)

// Three parallel walls (meshes 0, 1, 2) at x = 1, 2, 3: a segment from the
// origin to x = 4 crosses all three. With k = 2 the two nearest are kept,
// in order of t (a distance from start + 1e-5 along the unit direction),
// and the count says a third was passed.
func ExampleScene_Crossings() {
	ctx := context.Background()
	wall := func(x float32) rayd.Mesh {
		return rayd.Mesh{Vertices: []float32{x, -1, -1, x, 1, -1, x, 1, 1, x, -1, 1}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{wall(1), wall(2), wall(3)}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c, err := s.Crossings(ctx, []float32{0, 0.5, 0.25}, []float32{4, 0.5, 0.25}, 2, nil)
	if err != nil {
		panic(err)
	}
	for j := range c.K {
		fmt.Printf("t=%.5f prim=%d shape=%d\n", c.T[j], c.Prim[j], c.Shape[j])
	}
	fmt.Println("count:", c.Count[0], "overflow:", c.Overflow[0])
	// Output:
	// t=0.99999 prim=0 shape=0
	// t=1.99999 prim=2 shape=1
	// count: 3 overflow: true
}
