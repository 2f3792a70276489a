package replica

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The grid_reduce RF tasks run resident with their partial shapes; wedge
// collection, the path export and anything else do not.
func TestLaneJobOf(t *testing.T) {
	g := rf.DfrGrid{Res0: 3, Res1: 5}
	for _, tc := range []struct {
		task  shard.Task
		shape accel.PartialShape
	}{
		{&shard.AccumDfrDirect{Grid: g}, accel.PartialShape{Acc: 30, Ints: 7}},
		{&shard.AccumDfrCoherentDirect{Grid: g}, accel.PartialShape{Acc: 30, Ints: 45}},
		{&shard.AccumulateReflections{Grid: rf.AccumGrid{Res0: 3, Res1: 5}}, accel.PartialShape{Acc: 105, Ints: 2}},
	} {
		j, ok := laneJobOf(tc.task)
		require.True(t, ok, "%T", tc.task)
		require.Equal(t, tc.shape, j.shape, "%T", tc.task)
		require.Same(t, tc.task, j.task)
	}
	wedges := &shard.AccumulateReflections{Options: rf.ReflOptions{CollectWedges: true}}
	for _, task := range []shard.Task{wedges, &shard.TraceDfrPaths{}, &shard.Intersect{}, (*shard.AccumDfrDirect)(nil), nil} {
		_, ok := laneJobOf(task)
		require.False(t, ok, "%T", task)
	}
}

// Grow-only buffers are at least what is asked and at most an eighth more.
func TestRoundUp(t *testing.T) {
	prev := 0
	for n := 1; n < 1<<16; n += 1 + n/50 {
		c := roundUp(n)
		require.GreaterOrEqual(t, c, n)
		require.LessOrEqual(t, c, n+max(n/8, 1), "n = %d", n)
		require.GreaterOrEqual(t, c, prev, "not monotonic at %d", n)
		prev = c
	}
	require.Equal(t, 1<<20, roundUp(1<<20))
}

// benchStates draws n states over a scene of faces faces.
func benchStates(n, faces int) *rf.DfrStates {
	r := rand.New(rand.NewPCG(1, 2))
	st := &rf.DfrStates{}
	f := func() float32 { return r.Float32() }
	for i := range n {
		st.EdgeIndex = append(st.EdgeIndex, int32(i))
		st.EdgePos, st.EdgeDir = append(st.EdgePos, f(), f(), f()), append(st.EdgeDir, f(), f(), f())
		st.EdgeTMin, st.EdgeTMax = append(st.EdgeTMin, -f()), append(st.EdgeTMax, f())
		st.N0, st.N1 = append(st.N0, f(), f(), f()), append(st.N1, f(), f(), f())
		st.Prim0, st.Prim1 = append(st.Prim0, int32(r.IntN(faces))), append(st.Prim1, int32(r.IntN(faces)))
		st.ExteriorAngle, st.SrcPower = append(st.ExteriorAngle, 4+f()), append(st.SrcPower, 1)
		st.Src, st.Wi, st.D0 = append(st.Src, f(), f(), 2), append(st.Wi, f(), f(), f()), append(st.D0, f(), f(), f())
	}
	return st
}

const benchStateCount, benchFaces = 100_000, 4096

// BenchmarkInputKey is the content key a resident call takes of 100 000
// states, a material and an active mask (shard's InputKey): compare with
// BenchmarkPackDfrStates, the packing a key hit saves.
func BenchmarkInputKey(b *testing.B) {
	st := benchStates(benchStateCount, benchFaces)
	m := rf.DefaultMaterial(benchFaces)
	active := make([]bool, benchStateCount)
	b.SetBytes(int64(112 * benchStateCount))
	for b.Loop() {
		t := &shard.AccumDfrDirect{Faces: benchFaces, States: st, Material: m, Active: active}
		_ = t.InputKey()
	}
}

// BenchmarkPackDfrStates packs the states of BenchmarkInputKey into a
// reused host buffer, as a resident call does on a key miss (before its
// upload).
func BenchmarkPackDfrStates(b *testing.B) {
	st := benchStates(benchStateCount, benchFaces)
	m := rf.DefaultMaterial(benchFaces)
	active := make([]bool, benchStateCount)
	tri := func(f int) (p0, p1, p2 [3]float32) {
		v := float32(f)
		return [3]float32{v, 0, 0}, [3]float32{0, v, 0}, [3]float32{0, 0, v}
	}
	var dst []uint32
	b.SetBytes(int64(112 * benchStateCount))
	for b.Loop() {
		dst = accel.PackDfrStatesInto(dst, st, benchStateCount, m, active, benchFaces, tri)
	}
}
