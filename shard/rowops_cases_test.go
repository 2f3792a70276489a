package shard_test

import (
	"cmp"
	"context"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/shard"
)

// rowOp is one per_ray operation over one batch together with its
// single-device reference, typed away so that every test can loop over the
// nearest-edge queries, the visibility variants and the backward passes.
type rowOp struct {
	key  string
	rows int
	// run calls the operation on a layer.
	run func(ctx context.Context, l *shard.Layer) (any, error)
	// check compares a result with the reference.
	check func(t *testing.T, got any)
	// join checks streamed chunks (their record type, every row exactly
	// once) and assembles them in row order with the task's Assemble.
	join func(t *testing.T, starts []int, chunks []any) any
}

func rowOpOf[R any](t *testing.T, task shard.RowTask[R], want R, count func(R) int, same func(*testing.T, R, R)) rowOp {
	t.Helper()
	n, err := task.Rows()
	require.NoError(t, err)
	key := task.Op().Key
	return rowOp{key: key, rows: n,
		run: func(ctx context.Context, l *shard.Layer) (any, error) { return shard.RunRows(ctx, l, task) },
		check: func(t *testing.T, got any) {
			t.Helper()
			rec, ok := got.(R)
			require.Truef(t, ok, "%s returned a %T", key, got)
			same(t, want, rec)
		},
		join: func(t *testing.T, starts []int, chunks []any) any {
			t.Helper()
			seen := make([]int, n)
			parts := make([]shard.Part[R], 0, len(chunks))
			for i, c := range chunks {
				rec, ok := c.(R)
				require.Truef(t, ok, "%s: streamed chunk %d is a %T", key, i, c)
				m := count(rec)
				require.LessOrEqual(t, starts[i]+m, n, key)
				for r := starts[i]; r < starts[i]+m; r++ {
					seen[r]++
				}
				parts = append(parts, shard.Part[R]{Start: starts[i], Stop: starts[i] + m, Record: rec})
			}
			for r, k := range seen {
				require.Equalf(t, 1, k, "%s: row %d streamed %d times", key, r, k)
			}
			slices.SortFunc(parts, func(a, b shard.Part[R]) int { return cmp.Compare(a.Start, b.Start) })
			rec, err := task.Assemble(n, parts)
			require.NoError(t, err, key)
			return rec
		}}
}

// rowOps builds every operation over in with the reference of s as it is
// now (after s's mutations): the three nearest-edge queries, the three
// visibility variants and the backward passes (the intersect VJP with and
// without its uv tape), the tapes taken from s's own forward passes.
func rowOps(t *testing.T, s *single, in *rowInputs) []rowOp {
	t.Helper()
	var ops []rowOp
	wp, err := s.edges.NearestPoint(in.points, in.active)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(wp.GlobalEdgeID, func(id int32) bool { return id >= 0 }), "the batch finds edges")
	ops = append(ops, rowOpOf(t, &shard.NearestEdge{Points: in.points, Active: in.active}, wp, (*edge.PointResult).Len, samePoints))
	wr, err := s.edges.NearestRay(in.o, in.d, in.tmax, in.rayActive)
	require.NoError(t, err)
	ops = append(ops, rowOpOf(t, &shard.NearestEdgeRay{O: in.o, D: in.d, TMax: in.tmax, Active: in.rayActive}, wr,
		(*edge.RayResult).Len, sameRays))
	wk, err := s.edges.NearestK(in.points, in.k, in.active)
	require.NoError(t, err)
	ops = append(ops, rowOpOf(t, &shard.NearestEdges{Points: in.points, K: in.k, Active: in.active}, wk, (*edge.TopK).Len, sameTopK))
	ops = append(ops, visibilityOps(t, s, in)...)
	return append(ops, vjpOps(t, s, in, wp, wr)...)
}

func visibilityOps(t *testing.T, s *single, in *rowInputs) []rowOp {
	t.Helper()
	q := s.scene.SegmentBlockers
	pb, err := geom.PairSegments(in.pairStart, in.pairA, in.pairB, in.pairIgnore, in.active)
	require.NoError(t, err)
	a, b, err := geom.VisiblePair(in.pairStart, in.pairA, in.pairB, in.pairIgnore, in.active, q)
	require.NoError(t, err)
	require.True(t, slices.Contains(a, true) && slices.Contains(a, false), "some segments are blocked, some not")
	eb, err := geom.EdgeSegments(in.samples)
	require.NoError(t, err)
	we, err := geom.VisibleEdge(in.samples, q)
	require.NoError(t, err)
	cb, err := geom.ChainSegments(in.chain, in.chainP, in.chainLen, in.chainIgnore, in.rayActive)
	require.NoError(t, err)
	wc, err := geom.VisibleChain(in.chain, in.chainP, in.chainLen, in.chainIgnore, in.rayActive, q)
	require.NoError(t, err)
	return []rowOp{
		rowOpOf(t, shard.PairTask(pb), &geom.PairVisibility{A: a, B: b}, (*geom.PairVisibility).Len, sameValue[*geom.PairVisibility]),
		rowOpOf(t, shard.EdgeVisibilityTask(eb), we, func(v []bool) int { return len(v) }, sameValue[[]bool]),
		rowOpOf(t, shard.ChainTask(cb), wc, (*geom.ChainVisibility).Len, sameValue[*geom.ChainVisibility]),
	}
}

func vjpOps(t *testing.T, s *single, in *rowInputs, wp *edge.PointResult, wr *edge.RayResult) []rowOp {
	t.Helper()
	nv := s.tables.NumVertices()
	hits, err := s.scene.Intersect(in.o, in.d, in.tmax, in.rayActive, geom.FlagsAll)
	require.NoError(t, err)
	var ops []rowOp
	for _, uv := range [][]float32{hits.UV, nil} {
		task := &shard.IntersectVJP{O: in.o, D: in.d, Active: in.rayActive, Prim: hits.PrimID, UV: uv, G: in.icot, Vertices: nv}
		want, err := ref.IntersectVJP(s.tables, in.o, in.d, in.rayActive, hits.PrimID, uv, in.icot)
		require.NoError(t, err)
		require.True(t, slices.ContainsFunc(want.Vertices, func(v float64) bool { return v != 0 }), "the rays hit")
		abs := absSums(t, in.n, 3*nv, func(i int) ([]float64, error) {
			g, err := ref.IntersectVJP(s.tables, row(in.o, i, 3), row(in.d, i, 3), row(in.rayActive, i, 1),
				row(hits.PrimID, i, 1), row(uv, i, 2), rowCot(in.icot, i))
			if err != nil {
				return nil, err
			}
			return g.Vertices, nil
		})
		ops = append(ops, rowOpOf(t, task, &shard.IntersectGrads{Vertices: narrow64(want.Vertices),
			Origins: narrow64(want.Origins), Directions: narrow64(want.Directions)},
			func(g *shard.IntersectGrads) int { return len(g.Origins) / 3 }, sameIntersectGrads(want.Vertices, abs)))
	}

	pt := &shard.NearestEdgeVJP{Points: in.points, GlobalEdgeID: wp.GlobalEdgeID, G: in.pcot, Vertices: nv}
	dp, dv, err := s.edges.NearestPointVJP(in.points, wp, in.pcot)
	require.NoError(t, err)
	abs := absSums(t, in.n, 3*nv, func(i int) ([]float64, error) {
		fwd := &edge.PointResult{Distance: []float32{0}, GlobalEdgeID: row(wp.GlobalEdgeID, i, 1)}
		_, dv, err := s.edges.NearestPointVJP(row(in.points, i, 3), fwd, edge.PointCotangent{Distance: row(in.pcot.Distance, i, 1),
			EdgePoint: row(in.pcot.EdgePoint, i, 3), EdgeT: row(in.pcot.EdgeT, i, 1)})
		return dv, err
	})
	ops = append(ops, rowOpOf(t, pt, &shard.EdgePointGrads{Points: dp, Vertices: dv},
		func(g *shard.EdgePointGrads) int { return len(g.Points) / 3 }, sameEdgePointGrads(abs)))

	rt := &shard.NearestEdgeRayVJP{O: in.o, D: in.d, TMax: in.tmax, GlobalEdgeID: wr.GlobalEdgeID, G: in.rcot, Vertices: nv}
	do, dd, dv, err := s.edges.NearestRayVJP(in.o, in.d, in.tmax, wr, in.rcot)
	require.NoError(t, err)
	abs = absSums(t, in.n, 3*nv, func(i int) ([]float64, error) {
		c := in.rcot
		fwd := &edge.RayResult{Distance: []float32{0}, GlobalEdgeID: row(wr.GlobalEdgeID, i, 1)}
		_, _, dv, err := s.edges.NearestRayVJP(row(in.o, i, 3), row(in.d, i, 3), row(in.tmax, i, 1), fwd,
			edge.RayCotangent{Distance: row(c.Distance, i, 1), RayT: row(c.RayT, i, 1), Point: row(c.Point, i, 3),
				EdgeT: row(c.EdgeT, i, 1), EdgePoint: row(c.EdgePoint, i, 3)})
		return dv, err
	})
	return append(ops, rowOpOf(t, rt, &shard.EdgeRayGrads{Origins: do, Directions: dd, Vertices: dv},
		func(g *shard.EdgeRayGrads) int { return len(g.Origins) / 3 }, sameEdgeRayGrads(abs)))
}

// row is row i of a field of per values per row; an absent field stays
// absent.
func row[T any](v []T, i, per int) []T {
	if v == nil {
		return nil
	}
	return v[per*i : per*(i+1)]
}

func rowCot(g geom.IntersectCotangents, i int) geom.IntersectCotangents {
	return geom.IntersectCotangents{T: row(g.T, i, 1), P: row(g.P, i, 3), N: row(g.N, i, 3), GeoN: row(g.GeoN, i, 3),
		UV: row(g.UV, i, 2), Bary: row(g.Bary, i, 3)}
}

// absSums is Σ over rows of |row i's vertex gradient|, per component: the
// scale of the vertex sums, against which their summation error is judged.
func absSums(t *testing.T, n, size int, rowGrad func(i int) ([]float64, error)) []float64 {
	t.Helper()
	abs := make([]float64, size)
	for i := range n {
		g, err := rowGrad(i)
		require.NoError(t, err)
		for j, v := range g {
			abs[j] += math.Abs(v)
		}
	}
	return abs
}

func narrow64(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func bits64(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}

func sameValue[R any](t *testing.T, want, got R) {
	t.Helper()
	require.Equal(t, want, got)
}

func samePoints(t *testing.T, want, got *edge.PointResult) {
	t.Helper()
	require.Equal(t, bits32(want.Distance), bits32(got.Distance), "distance")
	require.Equal(t, bits32(want.EdgePoint), bits32(got.EdgePoint), "edge_point")
	require.Equal(t, bits32(want.EdgeT), bits32(got.EdgeT), "edge_t")
	require.Equal(t, [3][]int32{want.ShapeID, want.EdgeID, want.GlobalEdgeID}, [3][]int32{got.ShapeID, got.EdgeID, got.GlobalEdgeID})
}

func sameRays(t *testing.T, want, got *edge.RayResult) {
	t.Helper()
	require.Equal(t, bits32(want.Distance), bits32(got.Distance), "distance")
	require.Equal(t, bits32(want.RayT), bits32(got.RayT), "ray_t")
	require.Equal(t, bits32(want.Point), bits32(got.Point), "point")
	require.Equal(t, bits32(want.EdgeT), bits32(got.EdgeT), "edge_t")
	require.Equal(t, bits32(want.EdgePoint), bits32(got.EdgePoint), "edge_point")
	require.Equal(t, [3][]int32{want.ShapeID, want.EdgeID, want.GlobalEdgeID}, [3][]int32{got.ShapeID, got.EdgeID, got.GlobalEdgeID})
}

func sameTopK(t *testing.T, want, got *edge.TopK) {
	t.Helper()
	require.Equal(t, want.K, got.K)
	require.Equal(t, want.Valid, got.Valid, "valid")
	require.Equal(t, want.Boundary, got.Boundary, "boundary")
	require.Equal(t, bits32(want.Distance), bits32(got.Distance), "distance")
	require.Equal(t, bits32(want.Point), bits32(got.Point), "point")
	require.Equal(t, bits32(want.EdgeT), bits32(got.EdgeT), "edge_t")
	require.Equal(t, bits32(want.EdgePoint), bits32(got.EdgePoint), "edge_point")
	require.Equal(t, [3][]int32{want.ShapeID, want.EdgeID, want.GlobalEdgeID}, [3][]int32{got.ShapeID, got.EdgeID, got.GlobalEdgeID})
}

// sameIntersectGrads: row gradients bit for bit; each vertex component
// within float32 summation error of the float64 sum want64, that is
// 2⁻²²·(|Σ| + Σ|row terms|): the chunk partials and the total are each
// rounded to float32 once.
func sameIntersectGrads(want64, abs []float64) func(*testing.T, *shard.IntersectGrads, *shard.IntersectGrads) {
	return func(t *testing.T, want, got *shard.IntersectGrads) {
		t.Helper()
		require.Equal(t, bits32(want.Origins), bits32(got.Origins), "origins")
		require.Equal(t, bits32(want.Directions), bits32(got.Directions), "directions")
		require.Len(t, got.Vertices, len(want.Vertices))
		for i, v := range got.Vertices {
			tol := 0x1p-22 * (math.Abs(want64[i]) + abs[i])
			require.InDeltaf(t, float64(want.Vertices[i]), float64(v), tol, "vertex value %d", i)
		}
	}
}

// The float64 edge backward passes: row gradients bit for bit, vertex sums
// within 1e-12 of Σ|row terms| (the partials are added in another order).
func sameEdgePointGrads(abs []float64) func(*testing.T, *shard.EdgePointGrads, *shard.EdgePointGrads) {
	return func(t *testing.T, want, got *shard.EdgePointGrads) {
		t.Helper()
		require.Equal(t, bits64(want.Points), bits64(got.Points), "points")
		requireSums(t, want.Vertices, got.Vertices, abs)
	}
}

func sameEdgeRayGrads(abs []float64) func(*testing.T, *shard.EdgeRayGrads, *shard.EdgeRayGrads) {
	return func(t *testing.T, want, got *shard.EdgeRayGrads) {
		t.Helper()
		require.Equal(t, bits64(want.Origins), bits64(got.Origins), "origins")
		require.Equal(t, bits64(want.Directions), bits64(got.Directions), "directions")
		requireSums(t, want.Vertices, got.Vertices, abs)
	}
}

func requireSums(t *testing.T, want, got, abs []float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.InDeltaf(t, want[i], got[i], 1e-12*abs[i], "vertex value %d", i)
	}
}
