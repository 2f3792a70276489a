package rayd_test

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd"
)

// Visibility masks: a mesh is hit only by rays whose mask shares a bit with
// its own; a per-ray TMin skips what lies before it.
func ExampleScene_SetMeshMask() {
	ctx := context.Background()
	tri := func(z float32, mask *uint8) rayd.Mesh {
		return rayd.Mesh{Vertices: []float32{-1, -1, z, 1, -1, z, 0, 1, z}, Faces: []int32{0, 1, 2}, Mask: mask}
	}
	// A glass pane (bit 0x02) in front of a wall (every bit).
	s, err := rayd.NewScene(ctx, []rayd.Mesh{tri(1, rayd.Mask(0x02)), tri(2, nil)}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rays := rayd.Rays{
		Origins:    []float32{0, 0, 0, 0, 0, 0, 0, 0, 0},
		Directions: []float32{0, 0, 1, 0, 0, 1, 0, 0, 1},
		Mask:       []uint8{0xFF, 0x01, 0xFF}, // the second ray does not see glass
		TMin:       []float32{0, 0, 1.5},      // the third starts past the pane
	}
	h, _ := s.Intersect(ctx, rays, rayd.FlagsAll)
	fmt.Println(h.T, h.ShapeID)
	// Hide the pane from every ray.
	_ = s.SetMeshMask(ctx, 0, 0)
	h, _ = s.Intersect(ctx, rayd.Rays{Origins: rays.Origins[:3], Directions: rays.Directions[:3]}, rayd.FlagsAll)
	fmt.Println(h.T, h.ShapeID)
	// Output:
	// [1 2 2] [0 1 1]
	// [2] [1]
}

// Rays.TMin starts each ray's interval: here past the first surface.
func ExampleRays_tMin() {
	ctx := context.Background()
	wall := func(z float32) rayd.Mesh {
		return rayd.Mesh{Vertices: []float32{-1, -1, z, 1, -1, z, 0, 1, z}, Faces: []int32{0, 1, 2}}
	}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{wall(1), wall(3)}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	h, _ := s.Intersect(ctx, rayd.Rays{Origins: []float32{0, 0, 0}, Directions: []float32{0, 0, 1},
		TMin: []float32{2}}, rayd.FlagsNone)
	fmt.Println(h.T)
	// Output: [3]
}
