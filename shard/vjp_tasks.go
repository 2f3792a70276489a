package shard

import (
	"fmt"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
)

// The backward passes shard their rows like a per_ray operation: every row's
// ray (or point) gradient depends on that row alone and is placed in row
// order, bitwise the single-device row. Their vertex gradient is a sum over
// rows: each chunk returns its partial (3 values per scene-global vertex),
// and Assemble adds the partials in float64 in ascending row order, so a
// sharded result is the same run to run. Under Offload the hook receives
// each chunk's record with its partial; the caller sums them.

// IntersectGrads is the record of the intersect VJP: per row ∂L/∂origin and
// ∂L/∂direction (3 each) and ∂L/∂vertices (3 per global vertex; in a chunk
// record, that chunk's partial).
type IntersectGrads struct {
	Vertices, Origins, Directions []float32
}

// EdgePointGrads is the record of the nearest_edge VJP: per row ∂L/∂point
// (3) and ∂L/∂vertices (3 per global vertex; a chunk's partial in a chunk
// record), in float64.
type EdgePointGrads struct {
	Points, Vertices []float64
}

// EdgeRayGrads is the record of the nearest_edge_ray VJP: per row
// ∂L/∂origin and ∂L/∂direction (3 each) and ∂L/∂vertices, in float64.
type EdgeRayGrads struct {
	Origins, Directions, Vertices []float64
}

// Byte widths: the intersect tape is a prim id and (u, v) (12 B), its
// cotangents up to 15 floats (60 B), its row gradient 24 B; an edge tape is
// one id (4 B), its cotangents up to 9 (point) or 11 (ray) float64s.
const (
	vjpTapeBytes   = 12
	vjpCotBytes    = 60
	vjpRowOutBytes = 24
)

// IntersectVJP is the intersect VJP task (frozen winner, operations spec
// §2.2): the rays, the forward's winner tape (Prim, one global face id per
// row; UV two per row or nil), the cotangents and the scene's vertex count.
type IntersectVJP struct {
	O, D     []float32
	Active   []bool
	Prim     []int32
	UV       []float32
	G        geom.IntersectCotangents
	Vertices int
}

// Op is the byte model of intersect_vjp.
func (t *IntersectVJP) Op() Op {
	return Op{Key: OpIntersectVJP, Class: PerRay, RowBytes: vjpRowOutBytes, ResultRowBytes: vjpRowOutBytes,
		TransferRowBytes: rayInBytes + vjpTapeBytes + vjpCotBytes + vjpRowOutBytes}
}

// Rows validates the batch, the tape and the cotangents.
func (t *IntersectVJP) Rows() (int, error) {
	n, err := geom.CheckRays(t.O, t.D, nil, t.Active)
	if err != nil {
		return 0, err
	}
	if len(t.Prim) != n {
		return 0, &geom.LengthError{Field: "prim", Got: len(t.Prim), Want: n, PerRow: 1}
	}
	if t.UV != nil && len(t.UV) != 2*n {
		return 0, &geom.LengthError{Field: "uv", Got: len(t.UV), Want: 2 * n, PerRow: 2}
	}
	if t.Vertices < 0 {
		return 0, &geom.ArgumentError{Field: "Vertices", Reason: fmt.Sprintf("%d", t.Vertices)}
	}
	return n, t.G.Check(n)
}

// Assemble places the row gradients and sums the vertex partials.
func (t *IntersectVJP) Assemble(total int, parts []Part[*IntersectGrads]) (*IntersectGrads, error) {
	r := &IntersectGrads{Origins: make([]float32, 3*total), Directions: make([]float32, 3*total)}
	sum := make([]float64, 3*t.Vertices)
	for _, p := range parts {
		c := p.Record
		if len(c.Origins) != 3*(p.Stop-p.Start) || len(c.Directions) != len(c.Origins) || len(c.Vertices) != len(sum) {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows and %d vertex values", OpIntersectVJP,
				p.Start, p.Stop, len(c.Origins)/3, len(c.Vertices))
		}
		copy(r.Origins[3*p.Start:], c.Origins)
		copy(r.Directions[3*p.Start:], c.Directions)
		for i, v := range c.Vertices {
			sum[i] += float64(v)
		}
	}
	r.Vertices = make([]float32, len(sum))
	for i, v := range sum {
		r.Vertices[i] = float32(v)
	}
	return r, nil
}

// RecordRowBytes is 24 (the vertex partial is per chunk, not per row).
func (t *IntersectVJP) RecordRowBytes(*IntersectGrads) int { return vjpRowOutBytes }

// NearestEdgeVJP is the nearest_edge VJP task (operations spec §5.7): the
// query points, the forward's frozen edge per row (GlobalEdgeID, −1 for a
// miss), the float64 cotangents and the scene's vertex count.
type NearestEdgeVJP struct {
	Points       []float32
	GlobalEdgeID []int32
	G            edge.PointCotangent
	Vertices     int
}

// Op is the byte model of nearest_edge_vjp.
func (t *NearestEdgeVJP) Op() Op {
	return Op{Key: OpNearestEdgeVJP, Class: PerRay, RowBytes: 24, ResultRowBytes: 24,
		TransferRowBytes: pointInBytes + 4 + 8*5 + 24}
}

// Rows validates the batch, the tape and the cotangents.
func (t *NearestEdgeVJP) Rows() (int, error) {
	n, err := edge.CheckPointBatch(t.Points, nil)
	if err != nil {
		return 0, err
	}
	if len(t.GlobalEdgeID) != n {
		return 0, &geom.LengthError{Field: "global_edge_id", Got: len(t.GlobalEdgeID), Want: n, PerRow: 1}
	}
	return n, checkCot(n, []cot{{"distance", t.G.Distance, 1}, {"edge_point", t.G.EdgePoint, 3}, {"edge_t", t.G.EdgeT, 1}})
}

// Assemble places the row gradients and sums the vertex partials.
func (t *NearestEdgeVJP) Assemble(total int, parts []Part[*EdgePointGrads]) (*EdgePointGrads, error) {
	r := &EdgePointGrads{Points: make([]float64, 3*total), Vertices: make([]float64, 3*t.Vertices)}
	for _, p := range parts {
		c := p.Record
		if len(c.Points) != 3*(p.Stop-p.Start) || len(c.Vertices) != len(r.Vertices) {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows and %d vertex values", OpNearestEdgeVJP,
				p.Start, p.Stop, len(c.Points)/3, len(c.Vertices))
		}
		copy(r.Points[3*p.Start:], c.Points)
		addTo(r.Vertices, c.Vertices)
	}
	return r, nil
}

// RecordRowBytes is 24.
func (t *NearestEdgeVJP) RecordRowBytes(*EdgePointGrads) int { return 24 }

// NearestEdgeRayVJP is the nearest_edge_ray VJP task: the rays (TMax as in
// the forward), the frozen edge per row, the float64 cotangents and the
// scene's vertex count.
type NearestEdgeRayVJP struct {
	O, D, TMax   []float32
	GlobalEdgeID []int32
	G            edge.RayCotangent
	Vertices     int
}

// Op is the byte model of nearest_edge_ray_vjp.
func (t *NearestEdgeRayVJP) Op() Op {
	return Op{Key: OpNearestEdgeRayVJP, Class: PerRay, RowBytes: 48, ResultRowBytes: 48,
		TransferRowBytes: rayTmaxInBytes + 4 + 8*9 + 48}
}

// Rows validates the batch, the tape and the cotangents.
func (t *NearestEdgeRayVJP) Rows() (int, error) {
	n, err := geom.CheckRays(t.O, t.D, t.TMax, nil)
	if err != nil {
		return 0, err
	}
	if len(t.GlobalEdgeID) != n {
		return 0, &geom.LengthError{Field: "global_edge_id", Got: len(t.GlobalEdgeID), Want: n, PerRow: 1}
	}
	return n, checkCot(n, []cot{{"distance", t.G.Distance, 1}, {"ray_t", t.G.RayT, 1}, {"point", t.G.Point, 3},
		{"edge_t", t.G.EdgeT, 1}, {"edge_point", t.G.EdgePoint, 3}})
}

// Assemble places the row gradients and sums the vertex partials.
func (t *NearestEdgeRayVJP) Assemble(total int, parts []Part[*EdgeRayGrads]) (*EdgeRayGrads, error) {
	r := &EdgeRayGrads{Origins: make([]float64, 3*total), Directions: make([]float64, 3*total),
		Vertices: make([]float64, 3*t.Vertices)}
	for _, p := range parts {
		c := p.Record
		if len(c.Origins) != 3*(p.Stop-p.Start) || len(c.Directions) != len(c.Origins) || len(c.Vertices) != len(r.Vertices) {
			return nil, fmt.Errorf("shard: %s chunk [%d,%d) has %d rows and %d vertex values", OpNearestEdgeRayVJP,
				p.Start, p.Stop, len(c.Origins)/3, len(c.Vertices))
		}
		copy(r.Origins[3*p.Start:], c.Origins)
		copy(r.Directions[3*p.Start:], c.Directions)
		addTo(r.Vertices, c.Vertices)
	}
	return r, nil
}

// RecordRowBytes is 48.
func (t *NearestEdgeRayVJP) RecordRowBytes(*EdgeRayGrads) int { return 48 }

// cot is one optional per-row cotangent field.
type cot struct {
	name string
	v    []float64
	per  int
}

func checkCot(n int, fs []cot) error {
	for _, f := range fs {
		if f.v != nil && len(f.v) != f.per*n {
			return &geom.LengthError{Field: "cotangent " + f.name, Got: len(f.v), Want: f.per * n, PerRow: f.per}
		}
	}
	return nil
}

func addTo(dst, src []float64) {
	for i, v := range src {
		dst[i] += v
	}
}

// The tasks this package defines for the layer's per_ray executor.
var (
	_ RowTask[*edge.PointResult]     = (*NearestEdge)(nil)
	_ RowTask[*edge.RayResult]       = (*NearestEdgeRay)(nil)
	_ RowTask[*edge.TopK]            = (*NearestEdges)(nil)
	_ RowTask[*geom.PairVisibility]  = (*Segments[*geom.PairVisibility])(nil)
	_ SegmentTask                    = (*Segments[[]bool])(nil)
	_ RowTask[*IntersectGrads]       = (*IntersectVJP)(nil)
	_ RowTask[*EdgePointGrads]       = (*NearestEdgeVJP)(nil)
	_ RowTask[*EdgeRayGrads]         = (*NearestEdgeRayVJP)(nil)
	_ RowTask[*geom.Hits]            = (*Intersect)(nil)
	_ RowTask[*geom.Reflections]     = (*TraceReflections)(nil)
	_ RowTask[[]bool]                = (*Visible)(nil)
	_ RowTask[*geom.ChainVisibility] = (*Segments[*geom.ChainVisibility])(nil)
)
