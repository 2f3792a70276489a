package accel

import (
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// ModuleVJP is the PTX module of the intersect VJP (ptx/src/vjp.cu).
const ModuleVJP = "vjp"

// VJPThreads is the block size of rayd_intersect_vjp (its __launch_bounds__).
const VJPThreads = 128

// Tape is the winner record of a forward Intersect on the device: the
// global prim id of every row (Hits.PrimID or Hits.GlobalPrimID; −1 for a
// miss) and, optionally, its barycentric (u, v) (Hits.UV; nil: recomputed
// by solving the hit system).
type Tape struct {
	Prim *launch.Buffer[int32]   // N
	UV   *launch.Buffer[float32] // 2N or nil
}

// Cotangents are the device-resident upstream gradients of intersect's
// outputs, per row: t (N), p (3N), n (3N), geo_n (3N), uv (2N),
// barycentric (3N). Any field may be nil (zero).
type Cotangents struct {
	T, P, N, GeoN, UV, Bary *launch.Buffer[float32]
}

// Grads receives the VJP on the device. Vertices (3 per scene-global vertex)
// is zeroed and then accumulated with atomics; Origins and Directions (3N)
// are written for every row. Any field may be nil (not computed).
type Grads struct {
	Vertices, Origins, Directions *launch.Buffer[float32]
}

// NumVertices is the number of scene-global vertices of the geometry the
// BVH was built from.
func (b *BVH) NumVertices() int { return b.numVerts }

// NumVertices is the number of scene-global vertices of the geometry the
// OptiX structure was built from.
func (o *OptiX) NumVertices() int { return o.numVerts }

// IntersectVJP is IntersectVJPGeometry over the BVH's device geometry (its
// current vertices, as of the last Build or Refit).
func (b *BVH) IntersectVJP(s *launch.Stream, r Rays, tape Tape, g Cotangents, out Grads) error {
	return IntersectVJPGeometry(s, b.geo, r, tape, g, out)
}

// IntersectVJP is IntersectVJPGeometry over the OptiX structure's device
// geometry (its current vertices, as of the last build or refit).
func (o *OptiX) IntersectVJP(s *launch.Stream, r Rays, tape Tape, g Cotangents, out Grads) error {
	return IntersectVJPGeometry(s, o.geo, r, tape, g, out)
}

// IntersectVJPGeometry queues the frozen-winner vector–Jacobian product of
// Intersect (spec §2.2; ref.IntersectVJP is its float64 reference) on s:
// for the rays r (O, D, Active and N; TMax is ignored: ∂tmax = 0), the tape
// of their forward Intersect over geometry g and the cotangents, it writes
// ∂L/∂vertices, ∂L/∂o and ∂L/∂d into out. Gradients are taken at g's
// current vertices; the winner is not re-traced. Each row is evaluated in
// double precision; the float32 vertex sums depend, in their last bits, on
// the order in which rows land.
func IntersectVJPGeometry(s *launch.Stream, g Geometry, r Rays, tape Tape, cot Cotangents, out Grads) error {
	if err := checkVJP(g, r, tape, cot, out); err != nil {
		return err
	}
	if out.Vertices != nil {
		v, err := out.Vertices.View(0, g.Vertices.Len())
		if err != nil {
			return err
		}
		if err := v.Memset32(s, 0); err != nil {
			return err
		}
	}
	if r.N == 0 {
		return nil
	}
	return launchVJP(streamRunner{s}, g, r, tape, cot, out)
}

func checkVJP(geo Geometry, r Rays, tape Tape, g Cotangents, out Grads) error {
	if err := r.check(); err != nil {
		return err
	}
	if geo.Vertices == nil || geo.Faces == nil {
		return fmt.Errorf("accel: IntersectVJP: no device geometry")
	}
	if tape.Prim == nil {
		return fmt.Errorf("accel: IntersectVJP: Tape.Prim is required")
	}
	n := r.N
	for _, e := range []error{needLen("Tape.Prim", tape.Prim, n), needLen("Tape.UV", tape.UV, 2*n),
		needLen("Cotangents.T", g.T, n), needLen("Cotangents.P", g.P, 3*n), needLen("Cotangents.N", g.N, 3*n),
		needLen("Cotangents.GeoN", g.GeoN, 3*n), needLen("Cotangents.UV", g.UV, 2*n),
		needLen("Cotangents.Bary", g.Bary, 3*n), needLen("Grads.Vertices", out.Vertices, geo.Vertices.Len()),
		needLen("Grads.Origins", out.Origins, 3*n), needLen("Grads.Directions", out.Directions, 3*n)} {
		if e != nil {
			return e
		}
	}
	return nil
}

// launchVJP queues rayd_intersect_vjp for checked arguments.
func launchVJP(run runner, geo Geometry, r Rays, tape Tape, g Cotangents, out Grads) error {
	k := &kernelLauncher{r: run, module: ModuleVJP}
	k.run("rayd_intersect_vjp", launch.Blocks(r.N, VJPThreads), launch.Threads(VJPThreads),
		geo.Vertices, geo.Faces, int32(geo.Faces.Len()/3), r.O, r.D, nullable(r.Active), int32(r.N),
		tape.Prim, nullable(tape.UV),
		nullable(g.T), nullable(g.P), nullable(g.N), nullable(g.GeoN), nullable(g.UV), nullable(g.Bary),
		nullable(out.Vertices), nullable(out.Origins), nullable(out.Directions))
	return k.err
}
