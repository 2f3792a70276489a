package shard_test

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/shard"
)

// Plan a two-device layer, build the scene on every device and run a
// sharded intersect. Here the devices are simulated; the public package
// passes the driver's topology and CUDA replicas instead.
func Example() {
	cluster := simdev.New(simdev.Config{Devices: 2})
	layer, err := shard.Plan([]int{0, 1}, cluster, shard.Options{MinRaysPerDevice: 64})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	meshes := []geom.Mesh{workload.GridMesh(8, 2)}
	if err := layer.Build(ctx, cluster.Builder(layer.Master(), meshes)); err != nil {
		fmt.Println(err)
		return
	}
	defer layer.Close()

	o, d := workload.PlaneRays(1000, 1)
	hits, err := shard.RunRows(ctx, layer, &shard.Intersect{O: o, D: d, Flags: geom.FlagsAll})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := layer.LastDispatch()
	plan := layer.LastChunkPlan()
	fmt.Println(hits.Len(), rec.Mode, rec.Shards)
	fmt.Println(plan.Source, plan.ChunkRays, plan.MasterChunkRays, plan.ChunkCount, *plan.MeasuredRowBytes)
	// Output:
	// 1000 pipelined [{0 0 0 500} {1 1 500 1000}]
	// pipeline 125 500 5 76
}

// Dry-run the dispatch decision: the floor judges the actual weighted
// remote shard, scaled by the operation's transfer width.
func ExampleLayer_PlanRows() {
	layer, _ := shard.Plan([]int{0, 1}, shard.Uniform(2), shard.Options{MinRaysPerDevice: 100})
	for _, rows := range []int{198, 199} {
		s, _ := layer.PlanRows(shard.IntersectOp(geom.FlagsAll), rows)
		fmt.Println(rows, s.Dispatch.Mode, s.Dispatch.Floor)
	}
	s, _ := layer.PlanRows(shard.TraceReflectionsOp(4), 199)
	fmt.Println("trace_reflections:4", s.Dispatch.Mode, s.Dispatch.Floor)
	// Output:
	// 198 master 100
	// 199 pipelined 100
	// trace_reflections:4 master 112
}

// Row shards truncate the weighted boundary; lane windows align it to a
// warp.
func ExampleRowShards() {
	fmt.Println(shard.RowShards([]int{0, 1}, []float64{9, 1}, 33))
	fmt.Println(shard.LaneShards([]int{0, 1}, []float64{3, 1}, 0, 100))
	// Output:
	// [{0 0 0 29} {1 1 29 33}]
	// [{0 0 0 64} {1 1 64 100}]
}

// Stream a batch through a typed offload hook: chunks arrive in issue
// order, ascending rows per device, interleaved across devices.
func ExampleOffloadAs() {
	cluster := simdev.New(simdev.Config{Devices: 2})
	hook := shard.OffloadAs(func(start int, v []bool) error {
		fmt.Println("rows", start, "to", start+len(v))
		return nil
	})
	layer, _ := shard.Plan([]int{0, 1}, cluster, shard.Options{ChunkRays: 4, Offload: hook})
	ctx := context.Background()
	_ = layer.Build(ctx, cluster.Builder(0, []geom.Mesh{workload.GridMesh(2, 2)}))
	defer layer.Close()
	seg := make([]float32, 3*12)
	out, err := shard.RunRows(ctx, layer, &shard.Visible{Start: seg, End: seg})
	fmt.Println(out == nil, err)
	// Output:
	// rows 0 to 4
	// rows 6 to 10
	// rows 4 to 6
	// rows 10 to 12
	// true <nil>
}
