package workload

import "github.com/rayd-go/rayd/geom"

// Seeds of the benchmark generators (multidevice spec §10.1).
const (
	// MeshSeed seeds CloudMesh.
	MeshSeed uint64 = 20260727
	// PlaneRaySeed seeds PlaneRays.
	PlaneRaySeed uint64 = 20260727
	// VolumeRaySeed seeds VolumeRays.
	VolumeRaySeed uint64 = 20260728
)

// Kind is the geometry of a configuration.
type Kind int

// The geometry kinds.
const (
	// Grid is GridMesh with PlaneRays.
	Grid Kind = iota + 1
	// Cloud is CloudMesh with VolumeRays.
	Cloud
)

// String names the kind ("grid", "cloud").
func (k Kind) String() string {
	switch k {
	case Grid:
		return "grid"
	case Cloud:
		return "cloud"
	}
	return "unknown"
}

// Config is one benchmark configuration. Size is the cell count of a grid or
// the triangle count of a cloud; Extent the grid span or the cloud's
// triangle half-width.
type Config struct {
	Name         string
	Kind         Kind
	Size         int
	Extent       float32
	Rays         int
	MaxBounces   int
	AccumSamples int
	ChunkRays    int
	Note         string
}

// The two configurations of the benchmark.
var (
	// Light: a 192×192-vertex grid, 1 bounce, few samples — transfer-bound.
	Light = Config{
		Name: "light", Kind: Grid, Size: 191, Extent: 2.0,
		Rays: 1 << 22, MaxBounces: 1, AccumSamples: 1 << 13, ChunkRays: 1 << 19,
		Note: "192-vertex grid (72,962 triangles), 1 bounce, small sample count -- transfer-bound",
	}
	// Compute: a 2.1M-triangle cloud, incoherent rays, 4 bounces, many
	// samples — compute-bound.
	Compute = Config{
		Name: "compute", Kind: Cloud, Size: 1 << 21, Extent: 0.005,
		Rays: 1 << 22, MaxBounces: 4, AccumSamples: 1 << 26, ChunkRays: 1 << 19,
		Note: "2.1M-triangle cloud, incoherent rays, 4 bounces, 67M samples -- compute-bound",
	}
)

// Triangles is the triangle count: 2·Size² for a grid, Size for a cloud.
func (c Config) Triangles() int {
	if c.Kind == Grid {
		return 2 * c.Size * c.Size
	}
	return c.Size
}

// Scaled returns a copy of c with Rays replaced (the --rays override).
func (c Config) Scaled(rays int) Config {
	c.Rays = rays
	return c
}

// Build generates the configuration's mesh and its ray batch: a grid with
// PlaneRays(Rays, PlaneRaySeed), or a cloud from MeshSeed with
// VolumeRays(Rays, VolumeRaySeed); any Kind other than Grid builds a cloud.
// The mesh has edges disabled, as the benchmark's per-ray scenes do.
func (c Config) Build() (mesh geom.Mesh, o, d []float32) {
	if c.Kind == Grid {
		mesh = GridMesh(c.Size, c.Extent)
		o, d = PlaneRays(c.Rays, PlaneRaySeed)
	} else {
		mesh = CloudMesh(c.Size, c.Extent, MeshSeed)
		o, d = VolumeRays(c.Rays, VolumeRaySeed)
	}
	mesh.EdgesDisabled = true
	return mesh, o, d
}
