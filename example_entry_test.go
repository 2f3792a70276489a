package rayd_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/rayd-go/rayd"
)

// floor is the unit square z = 0 split into two triangles (prims 0 and 1).
var floor = rayd.Mesh{
	Vertices: []float32{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0},
	Faces:    []int32{0, 1, 2, 0, 2, 3},
}

// Build a scene, shoot two rays down at it, read the hits, close it. The
// CPU backend makes the example run (and print the same) on any machine;
// drop WithBackend to run on the best GPU backend available.
func Example() {
	ctx := context.Background()
	s, err := rayd.NewScene(ctx, []rayd.Mesh{floor}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rays := rayd.Rays{
		Origins:    []float32{0.25, 0.5, 1, 2, 2, 1},
		Directions: []float32{0, 0, -1, 0, 0, -1},
	}
	hits, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	if err != nil {
		panic(err)
	}
	for i := range hits.Len() {
		if hits.Valid(i) {
			fmt.Printf("ray %d: hit prim %d at t=%g\n", i, hits.PrimID[i], hits.T[i])
		} else {
			fmt.Printf("ray %d: miss\n", i)
		}
	}
	// Output:
	// ray 0: hit prim 1 at t=1
	// ray 1: miss
}

// NewScene validates and copies the meshes and builds the acceleration
// structure; the scene reports what it holds and where it runs.
func ExampleNewScene() {
	ctx := context.Background()
	s, err := rayd.NewScene(ctx, []rayd.Mesh{floor}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Println("faces:", s.NumFaces(), "backend:", s.Backend())

	// A face that points past the vertex table is refused with a typed error.
	bad := rayd.Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 3}}
	_, err = rayd.NewScene(ctx, []rayd.Mesh{bad}, rayd.WithBackend(rayd.BackendCPU))
	fmt.Println("invalid mesh:", errors.Is(err, rayd.ErrInvalidMesh))
	// Output:
	// faces: 2 backend: cpu
	// invalid mesh: true
}

// Intersect returns the closest hit of every ray: t (in units of the
// direction, which is not normalized), the hit point, the face normal, the
// barycentric coordinates and the ids. FlagsAll asks for every field.
func ExampleScene_Intersect() {
	ctx := context.Background()
	s, err := rayd.NewScene(ctx, []rayd.Mesh{floor}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rays := rayd.Rays{Origins: []float32{0.75, 0.25, 2}, Directions: []float32{0, 0, -2}}
	h, err := s.Intersect(ctx, rays, rayd.FlagsAll)
	if err != nil {
		panic(err)
	}
	fmt.Printf("t=%g p=%v n=%v prim=%d mesh=%d\n", h.T[0], h.P[0:3], h.GeoN[0:3], h.PrimID[0], h.ShapeID[0])
	// Output:
	// t=1 p=[0.75 0.25 0] n=[0 0 1] prim=0 mesh=0
}

// TraceReflections follows each ray through up to maxBounces specular
// bounces and records, per bounce, whether it hit, the t of that segment,
// the face and the image source. Between two parallel mirrors a ray
// bounces back and forth; every reflected segment starts
// geom.MultipathBias (1e-5) past its hit point, so its t is 2 − 1e-5.
func ExampleScene_TraceReflections() {
	ctx := context.Background()
	ceiling := rayd.Mesh{
		Vertices: []float32{0, 0, 2, 1, 0, 2, 1, 1, 2, 0, 1, 2},
		Faces:    []int32{0, 1, 2, 0, 2, 3},
	}
	s, err := rayd.NewScene(ctx, []rayd.Mesh{floor, ceiling}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rays := rayd.Rays{Origins: []float32{0.25, 0.5, 1}, Directions: []float32{0, 0, -1}}
	const bounces = 3
	r, err := s.TraceReflections(ctx, rays, bounces)
	if err != nil {
		panic(err)
	}
	for b := range bounces {
		fmt.Printf("bounce %d: valid=%v t=%g prim=%d image=%v\n", b, r.Valid[b], r.T[b], r.PrimIDs[b], r.ImageSources[3*b:3*b+3])
	}
	// Output:
	// bounce 0: valid=true t=1 prim=1 image=[0.25 0.5 -1]
	// bounce 1: valid=true t=1.99999 prim=3 image=[0.25 0.5 5]
	// bounce 2: valid=true t=1.99999 prim=1 image=[0.25 0.5 -5]
}

// Visible reports, per segment, whether nothing blocks the way from start
// to end. A row with a NaN or infinite coordinate finds no hit and is
// reported visible; the variants (VisiblePair, VisibleEdge, VisibleChain)
// treat such a row as inactive instead and report false.
func ExampleScene_Visible() {
	ctx := context.Background()
	s, err := rayd.NewScene(ctx, []rayd.Mesh{floor}, rayd.WithBackend(rayd.BackendCPU))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	start := []float32{0.5, 0.5, 1, 0.5, 0.5, 1}
	end := []float32{0.5, 0.5, -1, 3, 0.5, 1} // through the floor; beside it
	vis, err := s.Visible(ctx, start, end, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("through the floor:", vis[0], "beside it:", vis[1])
	// Output:
	// through the floor: false beside it: true
}
