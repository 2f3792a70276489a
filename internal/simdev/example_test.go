package simdev_test

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/shard"
)

// The modelled makespan of one batch on one device and pipelined over two,
// with a link of 1 GB/s and 40 ns of compute per row: the pipeline hides
// most of the copies behind the compute.
func Example() {
	ctx := context.Background()
	meshes := []geom.Mesh{workload.GridMesh(4, 2)}
	o, d := workload.PlaneRays(4096, 1)
	task := &shard.Intersect{O: o, D: d, Flags: geom.FlagsNone}
	for _, devices := range [][]int{{0}, {0, 1}} {
		cluster := simdev.New(simdev.Config{Devices: 2, LinkBytesPerSecond: 1e9, RowNanos: 40})
		opts := shard.Options{MinRaysPerDevice: 1} // pipelined over two devices
		if len(devices) == 1 {
			opts.ChunkRays = 4096 // one chunk: a one-device layer needs a chunking knob
		}
		layer, _ := shard.Plan(devices, cluster, opts)
		_ = layer.Build(ctx, cluster.Builder(0, meshes))
		cluster.ResetStats()
		hits, err := shard.RunRows(ctx, layer, task)
		fmt.Println(len(devices), "device(s):", hits.Len(), err, cluster.Elapsed(), "modelled")
		layer.Close()
	}
	// Output:
	// 1 device(s): 4096 <nil> 163.84µs modelled
	// 2 device(s): 4096 <nil> 96.256µs modelled
}
