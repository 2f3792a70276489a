package simdev

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// rowTasks is one of each task of rowKernelOf over 6 rows, every optional
// field present.
func rowTasks(t *testing.T) []shard.Task {
	t.Helper()
	n := 6
	f32 := func(per int) []float32 {
		v := make([]float32, per*n)
		for i := range v {
			v[i] = float32(i%7)*0.25 - 0.5
		}
		return v
	}
	f64 := func(per int) []float64 {
		v := make([]float64, per*n)
		for i := range v {
			v[i] = float64(i%5) - 2
		}
		return v
	}
	on := []bool{true, false, true, true, false, true}
	ids := []int32{0, 3, -1, 7, 1, 2}
	pairs, err := geom.PairSegments(f32(3), f32(3), f32(3), []int32{1, -1, 2, 3, -1, 4}, on)
	require.NoError(t, err)
	chain, err := geom.ChainSegments(f32(9), 3, []int32{2, 1, 0, 2, 3, 2}, nil, on)
	require.NoError(t, err)
	samples, err := geom.EdgeSegments(geom.EdgeSamples{Source: f32(3), Position: f32(3), Direction: f32(3), TMin: f32(1),
		TMax: f32(1), Active: on})
	require.NoError(t, err)
	return []shard.Task{
		&shard.NearestEdge{Points: f32(3), Active: on},
		&shard.NearestEdgeRay{O: f32(3), D: f32(3), TMax: f32(1), Active: on},
		&shard.NearestEdges{Points: f32(3), K: 3, Active: on},
		shard.PairTask(pairs),
		shard.EdgeVisibilityTask(samples),
		shard.ChainTask(chain),
		&shard.IntersectVJP{O: f32(3), D: f32(3), Active: on, Prim: ids, UV: f32(2), Vertices: 25,
			G: geom.IntersectCotangents{T: f32(1), P: f32(3), N: f32(3), GeoN: f32(3), UV: f32(2), Bary: f32(3)}},
		&shard.NearestEdgeVJP{Points: f32(3), GlobalEdgeID: ids, Vertices: 25,
			G: edge.PointCotangent{Distance: f64(1), EdgePoint: f64(3), EdgeT: f64(1)}},
		&shard.NearestEdgeRayVJP{O: f32(3), D: f32(3), TMax: f32(1), GlobalEdgeID: ids, Vertices: 25,
			G: edge.RayCotangent{Distance: f64(1), RayT: f64(1), Point: f64(3), EdgeT: f64(1), EdgePoint: f64(3)}},
	}
}

// span is the memory of one slice.
type span struct {
	lo, hi uintptr
	path   string
}

// spans collects the memory of every non-empty slice reachable from v
// (through pointers and struct fields).
func spans(v reflect.Value, path string) []span {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return spans(v.Elem(), path)
		}
	case reflect.Struct:
		var out []span
		for i := range v.NumField() {
			out = append(out, spans(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	case reflect.Slice:
		if v.Len() > 0 {
			lo := v.Pointer()
			return []span{{lo, lo + uintptr(v.Len())*v.Type().Elem().Size(), path}}
		}
	}
	return nil
}

// shared names the slices of b whose memory overlaps a slice of a.
func shared(a, b any) []string {
	var out []string
	for _, y := range spans(reflect.ValueOf(b), "") {
		for _, x := range spans(reflect.ValueOf(a), "") {
			if y.lo < x.hi && x.lo < y.hi {
				out = append(out, y.path)
			}
		}
	}
	return out
}

// A remote's scattered rows and gathered outputs are deep copies; a
// master's are views. The modelled sizes come from the tasks' byte models:
// TransferRowBytes − RowBytes in and ResultRowBytes out per row, plus one
// vertex partial for a backward pass.
func TestRowKernelsCopyAndPrice(t *testing.T) {
	s := rfTestScene(t) // 25 vertices
	require.Equal(t, 25, s.Tables().NumVertices())
	for _, task := range rowTasks(t) {
		k, err := rowKernelOf(task)
		require.NoError(t, err)
		require.NotNil(t, k, "%T", task)
		op := task.Op()
		view, bytes := k.Input(2, 5, false)
		require.Equal(t, 3*(op.TransferRowBytes-op.RowBytes), bytes, op.Key)
		require.Positive(t, bytes)
		copied, _ := k.Input(2, 5, true)
		require.Equal(t, view, copied, op.Key)
		require.NotEmpty(t, shared(task, view), "%s: the master reads the caller's rows", op.Key)
		require.Empty(t, shared(task, copied), "%s: a remote's rows are its own", op.Key)

		want := 3 * op.ResultRowBytes
		switch task.(type) {
		case *shard.IntersectVJP:
			want += 4 * 75
		case *shard.NearestEdgeVJP, *shard.NearestEdgeRayVJP:
			want += 8 * 75
		}
		require.Equal(t, want, k.OutputBytes(2, 5), op.Key)
		out, err := k.run(newState(s, s.Tables()), copied, 2, 5)
		require.NoError(t, err, op.Key)
		g, n := k.Output(out, true)
		require.Equal(t, want, n, op.Key)
		require.Equal(t, out, g, op.Key)
		require.Empty(t, shared(out, g), "%s: a gathered output is a copy", op.Key)
		_, err = k.Add(out, g)
		require.ErrorIs(t, err, errPlaced)
	}
}

// A segment batch that does not hold its segments is refused, not sliced.
func TestSegmentKernelRefusesAMalformedBatch(t *testing.T) {
	b, err := geom.PairSegments(make([]float32, 6), make([]float32, 6), make([]float32, 6), nil, nil)
	require.NoError(t, err)
	_, err = kernelOf(shard.PairTask(b))
	require.NoError(t, err)
	b.Start = b.Start[:9]
	_, err = kernelOf(shard.PairTask(b))
	require.ErrorIs(t, err, geom.ErrInvalidArgument)
	require.ErrorContains(t, err, "start holds 9 values for 2 rows of 2 segments")
	_, err = kernelOf(shard.PairTask(nil))
	require.ErrorIs(t, err, geom.ErrInvalidArgument)
	k, err := rowKernelOf(&shard.Intersect{})
	require.NoError(t, err)
	require.Nil(t, k, "not a row kernel")
}
