package simdev

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/ref"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

func rfTestScene(t *testing.T) *ref.Scene {
	t.Helper()
	tables, err := geom.BuildTables([]geom.Mesh{workload.GridMesh(4, 2)})
	require.NoError(t, err)
	s, err := ref.NewScene(tables)
	require.NoError(t, err)
	return s
}

func rfTestStates() *rf.DfrStates {
	return &rf.DfrStates{
		EdgeIndex: []int32{7, 8}, EdgePos: []float32{0, 0, 0.5, 0.25, 0, 0.6}, EdgeDir: []float32{1, 0, 0, 0, 1, 0},
		EdgeTMin: []float32{-1, -1}, EdgeTMax: []float32{1, 1}, N0: []float32{0, 0, 1, 0, 0, 1}, N1: []float32{0, 1, 0, 1, 0, 0},
		Prim0: []int32{0, 3}, Prim1: []int32{1, -1}, ExteriorAngle: []float32{4.5, 5},
		Src: []float32{0, -0.5, 1.5, 0.3, 0.2, 1.5}, SrcPower: []float32{1, 2},
	}
}

var rfTestGrid = rf.DfrGrid{Axis: 2, Position: 0.1, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 4, Res1: 3}

// A task without a kernel is refused as before.
func TestRFKernelOfRefusesOtherTasks(t *testing.T) {
	_, err := rfKernelOf(&shard.Intersect{})
	require.ErrorContains(t, err, "simdev: no kernel for task")
	for _, task := range []shard.Task{&shard.AccumDfrDirect{}, &shard.AccumDfrCoherentDirect{},
		&shard.AccumulateReflections{}, &shard.TraceDfrPaths{}} {
		k, err := rfKernelOf(task)
		require.NoError(t, err)
		require.NotNil(t, k)
	}
}

// A launch runs package rf's reference over its window; a remote's inputs
// and outputs are deep copies.
func TestRFDirectKernelRunsItsWindow(t *testing.T) {
	s := rfTestScene(t)
	o := rf.DefaultAccumOptions()
	o.DirectSamples, o.KellerSamples, o.SuffixSamples, o.Seed = 300, 100, 100, 3
	task := &shard.AccumDfrDirect{Faces: s.NumFaces(), States: rfTestStates(), Grid: rfTestGrid, Options: o}
	k, err := rfKernelOf(task)
	require.NoError(t, err)
	in, bytes := k.Input(0, 0, true)
	require.Equal(t, int(task.InputBytes()), bytes)
	in.(*shard.AccumDfrDirect).States.EdgePos[0] = 99
	require.NotEqual(t, float32(99), task.States.EdgePos[0], "a copied input shares the caller's memory")

	in, _ = k.Input(0, 0, false)
	out, err := k.Run(s, in, 64, 320)
	require.NoError(t, err)
	wo := o
	wo.LaneOffset, wo.LaneCount = 64, 256
	want, err := rf.AccumDfrDirect(rfScene{s}, task.States, task.Grid, nil, nil, wo)
	require.NoError(t, err)
	require.Equal(t, want, out)
	c, n := k.Output(out, true)
	require.Equal(t, 7*12*4+7*4, n)
	c.(*rf.AccumResult).Power[0] = -1
	require.NotEqual(t, float64(-1), out.(*rf.AccumResult).Power[0], "a gathered output shares the device's memory")
	sum, err := k.Add(out, c)
	require.NoError(t, err)
	require.Same(t, out, sum)
}

// The path kernel runs a transmitter block; its blocks are placed.
func TestRFPathsKernelRunsItsBlock(t *testing.T) {
	s := rfTestScene(t)
	opt := rf.DefaultPathOptions()
	opt.Layout, opt.TxPolarization = rf.SourceLane, []float32{1, 0, 0, 0, 1, 0, 0, 0, 1}
	task := &shard.TraceDfrPaths{Faces: s.NumFaces(), Tx: make([]float32, 9), Rx: []float32{0.2, 0.1, 0.05, -0.3, 0.4, 0.05},
		States: rfTestStates(), Active: []bool{true, true}, Options: opt}
	k, err := rfKernelOf(task)
	require.NoError(t, err)
	in, _ := k.Input(1, 3, true)
	blk := in.(*shard.TraceDfrPaths)
	require.Len(t, blk.Tx, 6)
	require.Equal(t, []float32{0, 1, 0, 0, 0, 1}, blk.Options.TxPolarization)
	out, err := k.Run(s, in, 1, 3)
	require.NoError(t, err)
	p := out.(*rf.DfrPaths)
	require.Equal(t, 2*2*2, p.Capacity)
	require.Equal(t, k.OutputBytes(1, 3), func() int { _, n := k.Output(out, false); return n }())
	_, err = k.Add(out, out)
	require.ErrorIs(t, err, errPlaced)
}

// The reflection kernel runs its rows of the batch.
func TestRFReflectionKernelRunsItsRows(t *testing.T) {
	s := rfTestScene(t)
	rays := rf.ReflRays{O: []float32{0, 0, 1, 0.1, 0, 1, 0.2, 0, 1}, D: []float32{0, 0, -1, 0, 0, -1, 0, 0, -1},
		TxPosition: []float32{0, 0, 1, 0.1, 0, 1, 0.2, 0, 1}}
	mat := rf.DefaultMaterial(s.NumFaces())
	for i := range mat.EtaR {
		mat.EtaR[i] = 4
	}
	g := rf.AccumGrid{Axis: 2, Position: 0.5, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 2, Res1: 2}
	o := rf.DefaultReflOptions()
	task := &shard.AccumulateReflections{Faces: s.NumFaces(), Rays: rays, Grid: g, Material: mat, MaxBounces: 1, Options: o}
	k, err := rfKernelOf(task)
	require.NoError(t, err)
	in, _ := k.Input(0, 0, true)
	out, err := k.Run(s, in, 1, 3)
	require.NoError(t, err)
	want, err := rf.AccumulateReflections(rfScene{s}, task.Window(1, 3), g, mat, 1, o)
	require.NoError(t, err)
	require.Equal(t, want, out)
	require.Equal(t, 2, out.(*rf.ReflResult).RayCount)
	require.Equal(t, 2*2*7*4+8, k.OutputBytes(0, 0))
}
