package simdev

import (
	"fmt"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// The simulated backward passes run the CPU references over the launch's
// rows at the replica's vertices as of the last SyncGeometry: ref.IntersectVJP
// (float64, narrowed to float32 as the single-device scene does) and package
// edge's NearestPointVJP and NearestRayVJP (float64). Each launch returns its
// rows' gradients and its partial vertex gradient; shard adds the partials.

// checkVertices refuses a task whose vertex count is not the scene's.
func checkVertices(op string, want, got int) error {
	if want != got {
		return &geom.ArgumentError{Field: "Vertices", Reason: fmt.Sprintf("%s names %d vertices, the scene has %d", op, want, got)}
	}
	return nil
}

func narrow(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// intersectVJPKernel runs intersect_vjp.
type intersectVJPKernel struct{ *shard.IntersectVJP }

func (k intersectVJPKernel) Input(lo, hi int, copied bool) (any, int) {
	t, g := k.IntersectVJP, k.G
	in := &shard.IntersectVJP{O: rows(t.O, lo, hi, 3, copied), D: rows(t.D, lo, hi, 3, copied),
		Active: rows(t.Active, lo, hi, 1, copied), Prim: rows(t.Prim, lo, hi, 1, copied), UV: rows(t.UV, lo, hi, 2, copied),
		G: geom.IntersectCotangents{T: rows(g.T, lo, hi, 1, copied), P: rows(g.P, lo, hi, 3, copied),
			N: rows(g.N, lo, hi, 3, copied), GeoN: rows(g.GeoN, lo, hi, 3, copied), UV: rows(g.UV, lo, hi, 2, copied),
			Bary: rows(g.Bary, lo, hi, 3, copied)},
		Vertices: t.Vertices}
	w, _ := rowWidths(k.Op())
	return in, w * (hi - lo)
}

func (k intersectVJPKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.IntersectVJP)
	if err := checkVertices(shard.OpIntersectVJP, t.Vertices, d.tables.NumVertices()); err != nil {
		return nil, err
	}
	g, err := ref.IntersectVJP(d.tables, t.O, t.D, t.Active, t.Prim, t.UV, t.G)
	if err != nil {
		return nil, err
	}
	return &shard.IntersectGrads{Vertices: narrow(g.Vertices), Origins: narrow(g.Origins), Directions: narrow(g.Directions)}, nil
}

func (k intersectVJPKernel) Output(out any, copied bool) (any, int) {
	g := out.(*shard.IntersectGrads)
	if copied {
		g = &shard.IntersectGrads{Vertices: clone(g.Vertices, true), Origins: clone(g.Origins, true),
			Directions: clone(g.Directions, true)}
	}
	_, w := rowWidths(k.Op())
	return g, w*len(g.Origins)/3 + 4*len(g.Vertices)
}

// OutputBytes is the rows' gradients and one float32 vertex partial.
func (k intersectVJPKernel) OutputBytes(lo, hi int) int {
	_, w := rowWidths(k.Op())
	return w*(hi-lo) + 4*3*k.Vertices
}

func (intersectVJPKernel) Add(_, _ any) (any, error) { return nil, errPlaced }

// pointVJPKernel runs nearest_edge_vjp.
type pointVJPKernel struct{ *shard.NearestEdgeVJP }

func (k pointVJPKernel) Input(lo, hi int, copied bool) (any, int) {
	t, g := k.NearestEdgeVJP, k.G
	in := &shard.NearestEdgeVJP{Points: rows(t.Points, lo, hi, 3, copied), GlobalEdgeID: rows(t.GlobalEdgeID, lo, hi, 1, copied),
		G: edge.PointCotangent{Distance: rows(g.Distance, lo, hi, 1, copied), EdgePoint: rows(g.EdgePoint, lo, hi, 3, copied),
			EdgeT: rows(g.EdgeT, lo, hi, 1, copied)},
		Vertices: t.Vertices}
	w, _ := rowWidths(k.Op())
	return in, w * (hi - lo)
}

func (k pointVJPKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.NearestEdgeVJP)
	if err := checkVertices(shard.OpNearestEdgeVJP, t.Vertices, d.tables.NumVertices()); err != nil {
		return nil, err
	}
	fwd := &edge.PointResult{Distance: make([]float32, len(t.GlobalEdgeID)), GlobalEdgeID: t.GlobalEdgeID}
	dp, dv, err := d.edgeScene().NearestPointVJP(t.Points, fwd, t.G)
	if err != nil {
		return nil, err
	}
	return &shard.EdgePointGrads{Points: dp, Vertices: dv}, nil
}

func (k pointVJPKernel) Output(out any, copied bool) (any, int) {
	g := out.(*shard.EdgePointGrads)
	if copied {
		g = &shard.EdgePointGrads{Points: clone(g.Points, true), Vertices: clone(g.Vertices, true)}
	}
	_, w := rowWidths(k.Op())
	return g, w*len(g.Points)/3 + 8*len(g.Vertices)
}

// OutputBytes is the rows' gradients and one float64 vertex partial.
func (k pointVJPKernel) OutputBytes(lo, hi int) int {
	_, w := rowWidths(k.Op())
	return w*(hi-lo) + 8*3*k.Vertices
}

func (pointVJPKernel) Add(_, _ any) (any, error) { return nil, errPlaced }

// rayVJPKernel runs nearest_edge_ray_vjp.
type rayVJPKernel struct{ *shard.NearestEdgeRayVJP }

func (k rayVJPKernel) Input(lo, hi int, copied bool) (any, int) {
	t, g := k.NearestEdgeRayVJP, k.G
	in := &shard.NearestEdgeRayVJP{O: rows(t.O, lo, hi, 3, copied), D: rows(t.D, lo, hi, 3, copied),
		TMax: rows(t.TMax, lo, hi, 1, copied), GlobalEdgeID: rows(t.GlobalEdgeID, lo, hi, 1, copied),
		G: edge.RayCotangent{Distance: rows(g.Distance, lo, hi, 1, copied), RayT: rows(g.RayT, lo, hi, 1, copied),
			Point: rows(g.Point, lo, hi, 3, copied), EdgeT: rows(g.EdgeT, lo, hi, 1, copied),
			EdgePoint: rows(g.EdgePoint, lo, hi, 3, copied)},
		Vertices: t.Vertices}
	w, _ := rowWidths(k.Op())
	return in, w * (hi - lo)
}

func (k rayVJPKernel) run(d *state, in any, _, _ int) (any, error) {
	t := in.(*shard.NearestEdgeRayVJP)
	if err := checkVertices(shard.OpNearestEdgeRayVJP, t.Vertices, d.tables.NumVertices()); err != nil {
		return nil, err
	}
	fwd := &edge.RayResult{Distance: make([]float32, len(t.GlobalEdgeID)), GlobalEdgeID: t.GlobalEdgeID}
	do, dd, dv, err := d.edgeScene().NearestRayVJP(t.O, t.D, t.TMax, fwd, t.G)
	if err != nil {
		return nil, err
	}
	return &shard.EdgeRayGrads{Origins: do, Directions: dd, Vertices: dv}, nil
}

func (k rayVJPKernel) Output(out any, copied bool) (any, int) {
	g := out.(*shard.EdgeRayGrads)
	if copied {
		g = &shard.EdgeRayGrads{Origins: clone(g.Origins, true), Directions: clone(g.Directions, true),
			Vertices: clone(g.Vertices, true)}
	}
	_, w := rowWidths(k.Op())
	return g, w*len(g.Origins)/3 + 8*len(g.Vertices)
}

// OutputBytes is the rows' gradients and one float64 vertex partial.
func (k rayVJPKernel) OutputBytes(lo, hi int) int {
	_, w := rowWidths(k.Op())
	return w*(hi-lo) + 8*3*k.Vertices
}

func (rayVJPKernel) Add(_, _ any) (any, error) { return nil, errPlaced }
