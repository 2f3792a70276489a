package replica_test

import (
	"context"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// A replicated scene on CUDA devices 0 and 1: the Source opens the devices
// and builds one replica per device, shard plans and runs the call, and the
// result is bitwise the single-device answer. (Needs two GPUs; without them
// Plan reports shard.ErrNoDevices.)
func Example() {
	ctx := context.Background()
	src := replica.NewSource(replica.Options{})
	defer src.Close()
	layer, err := shard.Plan([]int{0, 1}, src.Topology(), shard.Options{MinRaysPerDevice: 1024})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer layer.Close()
	square := geom.Mesh{Vertices: []float32{-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	if err := layer.Build(ctx, src.Builder(layer.Master(), []geom.Mesh{square})); err != nil {
		fmt.Println(err)
		return
	}
	const n = 4096
	o, d := make([]float32, 0, 3*n), make([]float32, 0, 3*n)
	for i := range n {
		x := float32(i%64)/32 - 1
		y := float32(i/64)/32 - 1
		o, d = append(o, x, y, 1), append(d, 0, 0, -1)
	}
	hits, err := shard.RunRows(ctx, layer, &shard.Intersect{O: o, D: d, Flags: geom.FlagsAll})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hits.Len(), "rows,", layer.LastDispatch().Mode, "over", layer.LastDispatch().Shards)
}

// The device-resident tasks carry the byte model of the shard operations:
// the floor, the chunk sizes and the memory budget treat them alike.
func ExampleDeviceReflections_Op() {
	op := (&replica.DeviceReflections{Bounces: 4}).Op()
	fmt.Println(op.Key, op.RowBytes, op.TransferRowBytes, op.MemoryRowBytes())
	op = (&replica.DeviceIntersect{Flags: geom.FlagsNone}).Op()
	fmt.Println(op.Key, op.RowBytes, op.TransferRowBytes, op.MemoryRowBytes())
	// Output:
	// trace_reflections:4 284 112 312
	// intersect_reduced 4 28 28
}
