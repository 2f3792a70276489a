package calibrate_test

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/geom"
)

// Calibrate a compute-bound operation on two identical devices. The layer
// is a stand-in for a built two-device *shard.Layer, and the probe is
// arithmetic (4 ns of compute and 2 ns of transfer per row, 1 ms of fixed
// cost per sharded dispatch); a CUDA probe times real runs with events.
func Example() {
	layer := newLayer(2)

	const rows = 1 << 20
	probe := calibrate.ProbeFuncs{
		Replica: func(context.Context, int) (time.Duration, error) { return rows * 4 * time.Nanosecond, nil },
		Dispatch: func(_ context.Context, w []float64) (time.Duration, error) {
			remote := float64(rows) * w[1] / (w[0] + w[1])
			if remote == 0 {
				return rows * 4 * time.Nanosecond, nil
			}
			master := (rows - remote) * 4
			link := remote*2 + remote*4/4 // copies, then the last chunk's compute
			return time.Duration(max(master, link)) + time.Millisecond, nil
		},
	}
	rec, err := calibrate.Calibrate(context.Background(), layer, probe,
		calibrate.Options{Operation: "trace_reflections:4", Rows: rows})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec)
	fmt.Println(layer.weightsFor("trace_reflections:4"))
	// Output:
	// trace_reflections:4 probe, 1048576 rows
	//   cuda:0     4.194 ms    250.00 Mrow/s  weight 1.0000
	//   cuda:1     4.194 ms    250.00 Mrow/s  weight 1.0000
	//   dispatch [1.0000, 1.0000]     3.097 ms  <-- chosen
	//   dispatch [1.0000, 0.5000]     3.796 ms
	//   dispatch [1.0000, 0.2500]     4.355 ms
	//   dispatch [1.0000, 0.1000]     4.813 ms
	//   dispatch [1.0000, 0.0000]     4.194 ms
	//   margin: best sharded rung 3.097 ms vs master-only 4.194 ms (+26.2% for sharding); sharded with a measured margin
	//   noise-aware: 3 rounds at 99% confidence, every comparison that could change the answer is outside the noise
	//   vs master-only [1.0000, 1.0000]: -26.2% [-26.2%, -26.2%] over 3 runs: faster
	//   vs master-only [1.0000, 0.5000]: -9.5% [-9.5%, -9.5%] over 3 runs: faster
	//   vs master-only [1.0000, 0.2500]: +3.8% [+3.8%, +3.8%] over 3 runs: slower
	//   vs master-only [1.0000, 0.1000]: +14.8% [+14.8%, +14.8%] over 3 runs: slower
	// [1 1]
}

// The refinement ladder of throughput weights: every remote share scaled by
// 1, 1/2, 1/4, 1/10 and 0, the master keeping its weight.
func ExampleLadder() {
	for _, w := range calibrate.Ladder([]float64{1.2, 0.8}) {
		fmt.Println(w)
	}
	// Output:
	// [1.2 0.8]
	// [1.2 0.4]
	// [1.2 0.2]
	// [1.2 0.08000000000000002]
	// [1.2 0]
}

// The built-in probe measures one operation, chosen by the bounce count.
func ExampleDefaultOperation() {
	fmt.Println(calibrate.DefaultOperation(0), calibrate.DefaultOperation(4))
	// Output: intersect_full trace_reflections:4
}

// The default probe's rays start in the bounding box of the master's first
// mesh (a flat square gets a 1e-3 thick box) with unit directions.
func ExampleDefaultRays() {
	square := geom.Mesh{Vertices: []float32{-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0}, Faces: []int32{0, 1, 2, 0, 2, 3}}
	o, d := calibrate.DefaultRays(square, 1000)
	inside, unit := 0, 0
	for i := range 1000 {
		x, y, z := o[3*i], o[3*i+1], o[3*i+2]
		if x >= -1 && x < 1 && y >= -1 && y < 1 && z >= 0 && z < 1e-3 {
			inside++
		}
		n := math.Sqrt(float64(d[3*i]*d[3*i] + d[3*i+1]*d[3*i+1] + d[3*i+2]*d[3*i+2]))
		if math.Abs(n-1) < 1e-6 {
			unit++
		}
	}
	fmt.Println(len(o)/3, inside, unit)
	// Output: 1000 1000 1000
}
