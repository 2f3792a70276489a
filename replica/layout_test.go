package replica

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

func width(l layout) int { return l.rowBytes() }

// The output layouts carry exactly the bytes of the shard byte model.
func TestLayoutsMatchTheByteModel(t *testing.T) {
	for f := geom.Flags(0); f <= geom.FlagsAll; f++ {
		assert.Equal(t, f.RowBytes(), width(hitsLayout(f)), "flags %v", f)
		assert.Equal(t, shard.IntersectOp(f).ResultRowBytes, width(hitsLayout(f)), "flags %v", f)
	}
	for b := 1; b <= 5; b++ {
		assert.Equal(t, geom.ReflectionRowBytes(b, true), width(reflLayout(b, true)))
		assert.Equal(t, geom.ReflectionRowBytes(b, false), width(reflLayout(b, false)))
		assert.Equal(t, shard.TraceReflectionsOp(b).ResultRowBytes, width(reflLayout(b, true)))
	}
	assert.Equal(t, 1, width(visLayout()))
	assert.Equal(t, 24, width(rayLayout(hostRayNames, false, false)))
	assert.Equal(t, 29, width(rayLayout(hostRayNames, true, true)))
}

// The new per_ray tasks: each job's output row is the RowBytes of the
// task's byte model (a vertex partial is per chunk and not counted).
func TestNewTaskLayoutsMatchTheByteModel(t *testing.T) {
	batch := &geom.SegmentBatch{Rows: 2, PerRow: 3, K: 2, Start: make([]float32, 18), End: make([]float32, 18),
		Active: make([]bool, 6), Ignore: make([]int32, 12), RowOK: make([]bool, 2)}
	tasks := []shard.Task{
		&shard.NearestEdge{Points: make([]float32, 6)},
		&shard.NearestEdgeRay{O: make([]float32, 6), D: make([]float32, 6)},
		&shard.NearestEdges{Points: make([]float32, 6), K: 4},
		shard.PairTask(batch),
		&shard.IntersectVJP{O: make([]float32, 6), D: make([]float32, 6), Prim: make([]int32, 2), Vertices: 7},
		&shard.NearestEdgeVJP{Points: make([]float32, 6), GlobalEdgeID: make([]int32, 2), Vertices: 7},
		&shard.NearestEdgeRayVJP{O: make([]float32, 6), D: make([]float32, 6), GlobalEdgeID: make([]int32, 2), Vertices: 7},
	}
	for _, task := range tasks {
		j, err := jobOf(task)
		require.NoError(t, err)
		op := task.Op()
		assert.Equal(t, op.Key, j.key)
		assert.Equal(t, op.RowBytes, width(j.out), op.Key)
		assert.False(t, j.device, op.Key)
		require.NoError(t, j.host.check(j.in, 2), op.Key)
		require.Error(t, j.host.check(j.in, 3), "%s: row 3 does not exist", op.Key)
	}
	j, err := jobOf(tasks[4])
	require.NoError(t, err)
	assert.Equal(t, 7, j.vertices)
	assert.Equal(t, spec{name: "vertices", per: 21, fixed: true}, j.out.f32[2])
	assert.Equal(t, 21, j.out.f32[2].length(1000), "a fixed column does not grow with the rows")
	assert.Equal(t, 3000, j.out.f32[0].length(1000))
	j, err = jobOf(tasks[0])
	require.NoError(t, err)
	assert.True(t, j.edges)
	assert.Equal(t, -1, j.vertices)
	j, err = jobOf(tasks[3])
	require.NoError(t, err)
	assert.Equal(t, []spec{col("segments.start", 9), col("segments.end", 9)}, j.in.f32)
	assert.Equal(t, []spec{col("segments.ignore", 6)}, j.in.i32)
	assert.Equal(t, []spec{col("segments.active", 3)}, j.in.u8)
	assert.False(t, j.edges)
}

// A segment task without a usable batch is refused before any device work.
func TestSegmentJobRefusesBadBatches(t *testing.T) {
	_, err := jobOf(&shard.Segments[[]bool]{Key: shard.OpVisibleEdge})
	require.ErrorContains(t, err, "without a segment batch")
	_, err = jobOf(shard.EdgeVisibilityTask(&geom.SegmentBatch{Rows: 1}))
	require.ErrorContains(t, err, "0 segments per row")
}

func TestJobsOfTheHostTasks(t *testing.T) {
	o, d := make([]float32, 9), make([]float32, 9)
	j, err := jobOf(&shard.Intersect{O: o, D: d, TMax: make([]float32, 3), Flags: geom.FlagsNone})
	require.NoError(t, err)
	assert.Equal(t, []spec{col("o", 3), col("d", 3), col("tmax", 1), col("tmin", 0)}, j.in.f32)
	assert.Equal(t, []spec{col("active", 0), col("mask", 0)}, j.in.u8)
	assert.False(t, j.device)
	// Per-ray limits travel as two more row columns; the mask as raw bytes.
	j, err = jobOf(&shard.Intersect{O: o, D: d, Flags: geom.FlagsNone, TMin: make([]float32, 3), Mask: []uint8{1, 2, 4}})
	require.NoError(t, err)
	assert.Equal(t, []spec{col("o", 3), col("d", 3), col("tmax", 0), col("tmin", 1)}, j.in.f32)
	assert.Equal(t, []spec{col("active", 0), col("mask", 1)}, j.in.u8)
	assert.Equal(t, []uint8{1, 2, 4}, j.host.rawAt(1))
	require.NoError(t, j.host.check(j.in, 3))
	require.ErrorContains(t, j.host.check(j.in, 4), "exceed mask")
	j, err = jobOf(&shard.TraceReflections{O: o, D: d, Bounces: 1, Mask: []uint8{1, 2, 4}})
	require.NoError(t, err)
	assert.Equal(t, []spec{col("active", 0), col("mask", 1)}, j.in.u8)
	j, err = jobOf(&shard.Visible{Start: o, End: d, Active: make([]bool, 3)})
	require.NoError(t, err)
	assert.Equal(t, shard.OpVisible, j.key)
	assert.Equal(t, []spec{col("start", 3), col("end", 3), col("tmax", 0)}, j.in.f32)
	assert.Equal(t, []uint8{1, 0}, boolBytes([]bool{false, true, false}[1:3]))
	j, err = jobOf(&shard.TraceReflections{O: o, D: d, Bounces: 3})
	require.NoError(t, err)
	assert.Equal(t, "trace_reflections:3", j.key)
	assert.Equal(t, 3, j.out.i32[0].per)
}

// A host input shorter than its rows, or a fixed input column, is refused.
func TestHostInputChecks(t *testing.T) {
	l := layout{f32: []spec{col("a", 3)}, i32: []spec{col("b", 2)}, u8: []spec{col("c", 1)}, f64: []spec{col("e", 1)}}
	h := hostIn{f32: [][]float32{make([]float32, 6)}, i32: [][]int32{make([]int32, 4)}, u8: [][]bool{make([]bool, 2)},
		f64: [][]float64{make([]float64, 2)}}
	require.NoError(t, h.check(l, 2))
	h.f64[0] = h.f64[0][:1]
	require.ErrorContains(t, h.check(l, 2), "exceed e")
	require.ErrorContains(t, hostIn{}.check(layout{f32: []spec{fixedCol("v", 3)}}, 1), "per chunk")
	require.NoError(t, hostIn{}.check(layout{f32: []spec{col("absent", 0)}}, 5))
}

// A fixed column has no rows to view.
func TestFixedColumnsHaveNoRowViews(t *testing.T) {
	_, err := columns{}.view(layout{f64: []spec{fixedCol("vertices", 3)}}, 0, 1)
	require.ErrorContains(t, err, "per chunk")
}

type foreignTask struct{}

func (foreignTask) Op() shard.Op { return shard.VisibleOp() }

func TestForeignTasksAreUnsupported(t *testing.T) {
	_, err := jobOf(foreignTask{})
	require.ErrorIs(t, err, shard.ErrUnsupported)
}

func TestCovered(t *testing.T) {
	p := func(a, b int) shard.Part[int] { return shard.Part[int]{Start: a, Stop: b} }
	require.NoError(t, covered(10, []shard.Part[int]{p(0, 4), p(4, 10)}))
	require.NoError(t, covered(0, []shard.Part[int]{p(0, 0)}))
	require.NoError(t, covered[int](0, nil))
	require.Error(t, covered(10, []shard.Part[int]{p(0, 4), p(5, 10)}))
	require.Error(t, covered(10, []shard.Part[int]{p(0, 4), p(3, 10)}))
	require.Error(t, covered(10, []shard.Part[int]{p(0, 4)}))
}

// A nil or foreign payload is refused before any device work.
func TestPayloadOf(t *testing.T) {
	_, err := payloadOf(nil, nil)
	require.Error(t, err)
	p := &payload{}
	p.released.Store(true)
	_, err = payloadOf(p, nil)
	require.ErrorContains(t, err, "after release")
	p.Release() // a released payload is not freed twice
}

func TestWaitOnNilEvents(t *testing.T) {
	require.NoError(t, waitOn(nil, nil))
	var e *event
	require.NoError(t, waitOn(nil, e))
	require.NoError(t, hostWait(nil))
	require.NoError(t, hostWait(e))
}
